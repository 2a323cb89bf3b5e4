import Foundation

/// The web pages' sign-in, like Jupyter's: `cohorly serve` prints a login URL holding a one-time token; opening
/// it (`GET /login?token=…`) spends the token and gives the browser a session cookie (HttpOnly, SameSite=Lax,
/// Path=/). Held in memory: a restarted collector prints a new URL and forgets old sessions. Whoever holds the
/// collector's secret (`/api`'s) can ask for a new login URL (`POST /api/web/login`).
///
/// The pages live under a host name of this collector alone, `cohorly-<32 random hex digits>.localhost`
/// (`hostName`; browsers resolve every `*.localhost` name to the loopback address themselves): a browser keeps
/// cookies per host, not per port, so a cookie set for `127.0.0.1` would also go to every other server on
/// `127.0.0.1`, a neighbour's included. The cookie is host-only on the unguessable name, and a session counts only
/// on a request to that name (`isWebHost`), so what a neighbour's server can make the browser send it holds no
/// credential.
///
/// Tokens and session ids are 32 random bytes from the system's generator (getrandom), compared in constant
/// time; at most `maximumLoginTokens` unspent tokens and `maximumSessions` sessions are kept (the oldest go
/// first), and a session lasts `sessionLifetime` seconds.
final class WebSessions: @unchecked Sendable {
    /// Unspent login tokens kept at once: 16.
    static let maximumLoginTokens = 16
    /// Sessions kept at once: 64.
    static let maximumSessions = 64
    /// How long a session lasts: 12 hours.
    static let sessionLifetime: Double = 12 * 3600

    private let lock = NSLock()
    private var loginTokens: [[UInt8]] = []
    private var sessions: [(id: [UInt8], expires: Double)] = []
    private let clock: @Sendable () -> Double
    private var port: UInt16 = 0
    /// The pages' host name: `cohorly-<32 hex digits>.localhost`, new for every collector (never in a refusal's
    /// text, never in a page).
    let hostName: String

    init(clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.clock = clock
        hostName = "cohorly-\(Self.randomHex().prefix(32)).localhost"
    }

    /// `http://<hostName>:<port>`, where the pages are.
    var origin: String { "http://\(hostName):\(lock.withLock { port })" }

    /// Whether `host` names the pages' host on the port the collector listens on.
    func isWebHost(_ host: String?) -> Bool { isWebHost(host, port: lock.withLock { port }) }

    /// Whether `host` (a `Host` header: `name[:port]`) names the pages' host on `port`. Browsers leave out port
    /// 80, and may keep a trailing dot.
    func isWebHost(_ host: String?, port: UInt16) -> Bool {
        guard var name = host?.lowercased()[...] else { return false }
        if let colon = name.lastIndex(of: ":") {
            guard UInt16(name[name.index(after: colon)...]) == port else { return false }
            name = name[..<colon]
        } else if port != 80 {
            return false
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        return name == hostName
    }

    /// Records the port the collector listens on (the cookie's name holds it).
    func listening(on port: UInt16) { lock.withLock { self.port = port } }

    /// `cohorly_session_<port>`: cookies are per host, not per port, so two collectors on one machine each keep
    /// their own.
    var cookieName: String { "cohorly_session_\(lock.withLock { port })" }

    /// A new one-time login token (64 hex digits).
    func newLoginToken() -> String {
        let token = Self.randomHex()
        lock.withLock {
            loginTokens.append(Array(token.utf8))
            if loginTokens.count > Self.maximumLoginTokens { loginTokens.removeFirst() }
        }
        return token
    }

    /// Whether `token` is an unspent login token (it stays unspent).
    func isUnspent(loginToken token: String) -> Bool {
        let bytes = Array(token.utf8)
        return lock.withLock { Self.index(of: bytes, in: loginTokens) != nil }
    }

    /// Spends `token`: a new session id when it was an unspent login token, else nil.
    func spend(loginToken token: String) -> String? {
        let bytes = Array(token.utf8)
        let session = Self.randomHex()
        return lock.withLock {
            guard let index = Self.index(of: bytes, in: loginTokens) else { return nil }
            loginTokens.remove(at: index)
            let now = clock()
            sessions.removeAll { $0.expires <= now }
            sessions.append((Array(session.utf8), now + Self.sessionLifetime))
            if sessions.count > Self.maximumSessions { sessions.removeFirst() }
            return session
        }
    }

    /// Whether `id` is a live session.
    func isValid(session id: String) -> Bool {
        let bytes = Array(id.utf8)
        return lock.withLock {
            let now = clock()
            sessions.removeAll { $0.expires <= now }
            return Self.index(of: bytes, in: sessions.map(\.id)) != nil
        }
    }

    /// Ends session `id` (nothing when there is none).
    func end(session id: String) {
        let bytes = Array(id.utf8)
        lock.withLock {
            if let index = Self.index(of: bytes, in: sessions.map(\.id)) { sessions.remove(at: index) }
        }
    }

    /// Where `value` is in `list`, every entry compared in full (time independent of where they differ).
    private static func index(of value: [UInt8], in list: [[UInt8]]) -> Int? {
        var found: Int?
        for (index, entry) in list.enumerated() where Router.constantTimeEqual(entry, value) && found == nil {
            found = index
        }
        return found
    }

    private static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String(
            (0..<32).flatMap { _ -> [Character] in
                let byte = UInt8.random(in: .min ... .max, using: &generator)
                return [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            })
    }
}
