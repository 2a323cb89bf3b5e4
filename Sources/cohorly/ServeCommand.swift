import CohorlyCollector
import Foundation

/// `cohorly serve`: runs the local collector until SIGINT or SIGTERM.
enum ServeCommand: Command {
    static let words = ["serve"]
    static let summary = "Run the local collector (ingestion, events, debug files, crashes)."
    static let help = """
        USAGE: cohorly serve [--port P] [--bind ADDR] [--data DIR] [--token T]… [--auth-token S] [--rate-limit N/SECONDS]

        OPTIONS:
          --port P             TCP port (default 4000; 0 picks a free one and prints it).
          --bind ADDR          IPv4 address to listen on (default 127.0.0.1).
          --data DIR           Where collector.sqlite lives (default $XDG_STATE_HOME/cohorly/collector).
          --token T            An accepted project token (repeatable; default COHORLY_TOKEN, else any).
          --auth-token S       Secret required on /api/* and /admin/* (default COHORLY_AUTH_TOKEN, else open).
          --rate-limit N/S     At most N requests per S seconds per client address.
          -h, --help           Show this help.

        Stops on SIGINT or SIGTERM. EXIT STATUS: 0 stopped cleanly, 1 could not start, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: [],
                options: ["--port", "--bind", "--data", "--token", "--auth-token", "--rate-limit"])
        } catch {
            return Console.usageError(error.reason, command: "serve")
        }
        guard parsed.positionals.isEmpty else {
            return Console.usageError("serve takes no arguments", command: "serve")
        }
        var configuration = CollectorConfiguration()
        configuration.port = 4000
        if let port = parsed.options["--port"]?.last {
            guard let value = UInt16(port) else {
                return Console.usageError("invalid --port \(port)", command: "serve")
            }
            configuration.port = value
        }
        if let bind = parsed.options["--bind"]?.last { configuration.bindAddress = bind }
        if let limit = parsed.options["--rate-limit"]?.last {
            guard let value = CollectorConfiguration.RateLimit(limit) else {
                return Console.usageError(
                    "invalid --rate-limit \(limit) (expected N/SECONDS, e.g. 100/10)", command: "serve")
            }
            configuration.rateLimit = value
        }
        let environment = ProcessInfo.processInfo.environment
        configuration.dataDirectory =
            parsed.options["--data"]?.last.map { URL(fileURLWithPath: $0) }
            ?? CollectorConfiguration.defaultDataDirectory()
        configuration.tokens = Set(parsed.options["--token"] ?? [])
        if configuration.tokens.isEmpty, let token = environment["COHORLY_TOKEN"], !token.isEmpty {
            configuration.tokens = [token]
        }
        configuration.adminToken = parsed.options["--auth-token"]?.last ?? environment["COHORLY_AUTH_TOKEN"]

        // Block the stop signals before any server thread starts, then wait for them here.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let collector: Collector
        do {
            collector = try Collector(configuration: configuration)
            try collector.start()
        } catch {
            Console.error("cohorly: cannot start the collector: \(error)")
            return .failure
        }
        let tokens = configuration.tokens.isEmpty ? "any token" : "\(configuration.tokens.count) token(s)"
        let data = configuration.dataDirectory?.path ?? "memory"
        // Unbuffered, so a script reading the chosen port sees it at once.
        Console.write("cohorly: listening on \(collector.baseURL.absoluteString) (data: \(data), \(tokens))\n")
        var received: Int32 = 0
        sigwait(&signals, &received)
        collector.stop()
        Console.write("cohorly: stopped\n")
        return .success
    }
}
