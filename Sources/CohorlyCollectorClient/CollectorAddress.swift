import Foundation

/// Where the collector is (`--host`, else `COHORLY_HOST`, else the default) and what to say when it cannot be
/// used: every message says how to fix the problem, not only what it is.
package enum CollectorAddress {
    /// Where `cohorly serve` listens by default.
    package static let defaultHost = "http://127.0.0.1:4000"

    /// The host to use and where it came from (`--host` or `COHORLY_HOST`, for messages).
    package static func resolve(option: String?, environment: [String: String]) -> (host: String, source: String) {
        if let option { return (option, "--host") }
        if let variable = environment["COHORLY_HOST"], !variable.isEmpty { return (variable, "COHORLY_HOST") }
        return (defaultHost, "--host")
    }

    /// Why `host` is not a collector URL, with how to write one; nil when it is an http(s) URL with a host.
    package static func problem(_ host: String, source: String) -> String? {
        if let url = URL(string: host), url.scheme == "http" || url.scheme == "https", url.host?.isEmpty == false {
            return nil
        }
        if !host.contains("://") {
            let example = host.isEmpty ? defaultHost : "http://" + host
            return "invalid \(source) '\(host)': a collector URL needs a scheme (use \(example))"
        }
        return "invalid \(source) '\(host)' (use an http:// or https:// URL such as \(defaultHost))"
    }

    /// The error for a request that got no answer; a refused connection asks whether the collector runs there.
    package static func unreachable(_ host: String, _ message: String) -> String {
        // libcurl's CURLE_COULDNT_CONNECT: nothing listens there (refused), or the address is unreachable.
        guard message.hasPrefix("Couldn't connect") else { return "cannot reach \(host): \(message)" }
        return "cannot reach \(host): \(message): is `cohorly serve` running at \(host)?"
            + " (start it with `cohorly serve`, or give the collector's URL with --host URL or COHORLY_HOST)"
    }

    /// What to do about a refusal of `/api` or `/admin`: a 401 says which secret and where it is read from.
    package static func hint(status: Int, sentSecret: Bool) -> String? {
        guard status == 401 else { return nil }
        if sentSecret {
            return "Hint: the secret sent (--auth-token-file FILE, else COHORLY_AUTH_TOKEN) is not the one this"
                + " collector was started with (`cohorly serve --auth-token-file FILE` or its COHORLY_AUTH_TOKEN)."
        }
        return "Hint: this collector requires its secret: set COHORLY_AUTH_TOKEN, or pass --auth-token-file FILE"
            + " (the file `cohorly serve --auth-token-file` reads)."
    }
}
