import CohorlyCommandLine
import CohorlyCollector
import Foundation

/// `cohorly serve`: runs the local collector until SIGINT or SIGTERM.
enum ServeCommand: Command {
    static let words = ["serve"]
    static let summary = "Run the local collector (ingestion, events, debug files, crashes, web page)."
    static let help = """
        USAGE: cohorly serve [--port P] [--bind ADDR] [--data DIR] [--token T]… [--auth-token-file FILE]
                             [--flag-secret-file FILE] [--rate-limit N/SECONDS] [--debug-dir DIR]…
                             [--allow-host NAME]… [--max-upload SIZE] [--connections-per-client N] [--log-requests]
                             [--web-actions]
                             [--no-issues]

        OPTIONS:
          --port P                    TCP port (default 4000; 0 picks a free one and prints it).
          --bind ADDR                 IPv4 address to listen on (default 127.0.0.1).
          --data DIR                  Where collector.sqlite lives (default $XDG_STATE_HOME/cohorly/collector);
                                      one collector per directory.
          --token T                   An accepted project token (repeatable; default COHORLY_TOKEN, else any).
          --auth-token-file FILE      Secret required on /api/* and /admin/* (uploads included), read from the first
                                      line of FILE (default COHORLY_AUTH_TOKEN; else open to every local user).
          --auth-token S              The same secret on the command line, where `ps` shows it: avoid.
          --flag-secret-file FILE     Secret required on GET /flags/local-evaluation, first line of FILE (default
                                      COHORLY_FLAG_SECRET; else the --auth-token-file secret; else open).
          --flag-secret S             The same on the command line, where `ps` shows it: avoid.
          --rate-limit N/S            At most N requests per S seconds per client address (N up to 1000000,
                                      S up to 86400).
          --debug-dir DIR             A directory whose debug files (searched recursively by build id) and
                                      binaries crashes may be symbolicated with (repeatable, e.g. /usr/lib/debug).
                                      Nothing else a crash names is ever opened.
          --allow-host NAME           Another name clients use for this server in `Host` (repeatable).
          --max-upload SIZE           Largest debug-file upload, e.g. 512M or 8G (default 4G).
          --connections-per-client N  Connections one client address may hold open (default 32).
          --log-requests              Log every request to standard error (default: the refused ones).
          --web-actions               Let the web page resolve, reopen and mute issues (default: it only reads).
          --no-issues                 Store crashes without grouping them into issues (only to measure what
                                      grouping costs: `cohorly issues` then shows nothing).
          -h, --help                  Show this help.

        Prints a one-time login URL for the web page (the crashes in a browser; docs/web.md), at a host name of
        this collector alone (http://cohorly-<random>.localhost:PORT, which browsers resolve to 127.0.0.1). A new
        one: POST /api/web/login with the secret.
        Stops on SIGINT or SIGTERM (within a second, cutting requests short if need be).
        EXIT STATUS: 0 stopped cleanly, 1 could not start, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--log-requests", "--web-actions", "--no-issues"],
                options: Set<String>([
                    "--port", "--bind", "--data", "--token", "--rate-limit", "--debug-dir", "--allow-host",
                    "--max-upload", "--connections-per-client",
                ]).union(SecretOption.options).union(SecretOption.flags.options))
        } catch {
            return Console.usageError(error.reason, command: "serve")
        }
        guard parsed.positionals.isEmpty else {
            return Console.usageError("serve takes no arguments", command: "serve")
        }
        let configuration: CollectorConfiguration
        switch ServeOptions.configuration(parsed) {
        case .failure(let error): return Console.usageError(error.reason, command: "serve")
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
