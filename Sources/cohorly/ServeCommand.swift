import CohorlyCommandLine
import CohorlyCollector
import Foundation

/// `cohorly serve`: runs the local collector until SIGINT or SIGTERM.
enum ServeCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["serve"], summary: "Run the local collector (ingestion, events, debug files, crashes, web page).",
        positionals: CommandPositionals("", count: 0...0, missing: "", tooMany: "serve takes no arguments"),
        options: ServeOptions.table,
        epilogue: """
            Prints a one-time login URL for the web page (the crashes in a browser; docs/web.md), at a host name of
            this collector alone (http://cohorly-<random>.localhost:PORT, which browsers resolve to 127.0.0.1). A new
            one: POST /api/web/login with the secret.
            Stops on SIGINT or SIGTERM (within a second, cutting requests short if need be).
            EXIT STATUS: 0 stopped cleanly, 1 could not start, 2 usage error.
            """)

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        let configuration: CollectorConfiguration
        switch ServeOptions.configuration(parsed) {
        case .failure(let error): return spec.usageError(error.reason)
        case .success(let value): configuration = value
        }

        // Block the stop signals before any server thread starts, then wait for them here.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let collector: Collector
        do {
            ServeMemory.mapLargeBuffers()
            collector = try Collector(configuration: configuration)
            try collector.start()
        } catch CollectorError.cannotListen(let address, let port) where port != 0 && PortProbe.inUse(address, port) {
            Console.error(
                "cohorly: cannot start the collector: port \(port) on \(address) is in use (another `cohorly serve`?);"
                    + " pick another with --port P, or --port 0 for a free one (printed once listening)")
            return .failure
        } catch {
            Console.error("cohorly: cannot start the collector: \(error)")
            return .failure
        }
        let tokens = configuration.tokens.isEmpty ? "any token" : "\(configuration.tokens.count) token(s)"
        let data = configuration.dataDirectory?.path ?? "memory"
        if configuration.adminToken == nil {
            Console.error(
                "cohorly: warning: no secret set: /api and /admin (events, crashes, uploads, faults) are open to every "
                    + "local user; set one with --auth-token-file FILE or COHORLY_AUTH_TOKEN")
        } else if parsed.options["--auth-token"] != nil, parsed.options["--auth-token-file"] == nil {
            Console.error(
                "cohorly: note: --auth-token shows the secret to every local user (ps); prefer --auth-token-file")
        }
        // Unbuffered, so a script reading the chosen port sees it at once.
        Console.write("cohorly: listening on \(collector.baseURL.absoluteString) (data: \(data), \(tokens))\n")
        Console.write("cohorly: web page: \(collector.newLoginURL().absoluteString) (this login URL works once)\n")
        if configuration.bindAddress != "0.0.0.0" && configuration.bindAddress != "127.0.0.1" {
            Console.error(
                "cohorly: note: the web page's name resolves to 127.0.0.1, where this collector does not listen; "
                    + "forward that port to it (ssh -L \(collector.port):\(configuration.bindAddress):\(collector.port) …)"
            )
        }
        var received: Int32 = 0
        sigwait(&signals, &received)
        stopWithin(seconds: 0.9, collector)
        Console.write("cohorly: stopped\n")
        return .success
    }

    /// Stops `collector`; when requests still running hold it up past `seconds`, they are cut short: the process
    /// ends at once (SQLite's journal keeps the database whole; an upload's temp file is dropped at next start).
    private static func stopWithin(seconds: Double, _ collector: Collector) {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            collector.stop()
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .timedOut else { return }
        Console.write("cohorly: stopped (requests still running were cut short)\n")
        _exit(0)
    }
}
