import CohorlyCollector
import Foundation

/// `cohorly serve`: runs the local collector until SIGINT or SIGTERM.
enum ServeCommand {
    static func run(_ arguments: [String]) -> Int32 {
        let scanner = OptionScanner(
            arguments, options: ["--port", "--bind", "--data", "--token", "--auth-token", "--rate-limit"], flags: [])
        guard scanner.positional.isEmpty else { Usage.fail("serve takes no arguments") }
        var configuration = CollectorConfiguration()
        configuration.port = 4000
        if let port = scanner.value("--port") {
            guard let value = UInt16(port) else { Usage.fail("invalid --port \(port)") }
            configuration.port = value
        }
        if let bind = scanner.value("--bind") { configuration.bindAddress = bind }
        if let limit = scanner.value("--rate-limit") {
            guard let parsed = CollectorConfiguration.RateLimit(limit) else {
                Usage.fail("invalid --rate-limit \(limit) (expected N/SECONDS, e.g. 100/10)")
            }
            configuration.rateLimit = parsed
        }
        configuration.dataDirectory =
            scanner.value("--data").map { URL(fileURLWithPath: $0) }
            ?? CollectorConfiguration.defaultDataDirectory()
        configuration.tokens = Set(scanner.values["--token"] ?? [])
        if configuration.tokens.isEmpty,
            let token = ProcessInfo.processInfo.environment["COHORLY_TOKEN"], !token.isEmpty
        {
            configuration.tokens = [token]
        }
        configuration.adminToken =
            scanner.value("--auth-token") ?? ProcessInfo.processInfo.environment["COHORLY_AUTH_TOKEN"]

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
            return Usage.failure("cannot start the collector: \(error)")
        }
        let tokens =
            configuration.tokens.isEmpty ? "any token" : "\(configuration.tokens.count) token(s)"
        let data = configuration.dataDirectory?.path ?? "memory"
        // Unbuffered, so a script reading the chosen port sees it at once.
        FileHandle.standardOutput.write(
            Data(
                "cohorly: listening on \(collector.baseURL.absoluteString) (data: \(data), \(tokens))\n"
                    .utf8))
        var received: Int32 = 0
        sigwait(&signals, &received)
        collector.stop()
        FileHandle.standardOutput.write(Data("cohorly: stopped\n".utf8))
        return 0
    }
}
