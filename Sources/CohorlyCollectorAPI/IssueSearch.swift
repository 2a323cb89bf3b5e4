import Foundation

/// A search of the collector's issues, one syntax for the list page (`?q=`), `cohorly issues list --query` and
/// `GET /api/issues?q=` (docs/issues.md, "Search"): terms separated by spaces, every term must match.
///
/// - a word or a `"quoted phrase"`: contained in the title, the message or the culprit (case-insensitive for
///   ASCII letters);
/// - `is:open|resolved|muted|regressed`, `level:fatal`, `app:NAME` (a comma between values: any of them);
/// - `release:R` (a bare version `1.2.0`, `App@1.2.0`, or a prefix: `MyApp`, `1.2`), `user:ID` (a distinct id),
///   `function:NAME` (contained in the function of any frame of an occurrence);
/// - `firstSeen:` / `lastSeen:` with `-24h` (within the last 24 hours), `+7d` (longer ago than 7 days; units `s`,
///   `m`, `h`, `d`, `w`), or `>DATE`, `>=DATE`, `<DATE`, `<=DATE` (`2026-12-01`, `2026-12-01T10:00:00Z`).
///
/// A value may be quoted (`user:"a b"`). A malformed query names its term (``IssueSearchError``). The collector
/// compiles the terms into SQL with bound parameters (Sources/CohorlyCollectorCore/IssueSearch+SQL.swift).
package struct IssueSearch: Sendable, Hashable {
    /// One term of a search.
    package enum Term: Sendable, Hashable {
        /// Contained in the title, the message or the culprit.
        case text(String)
        /// The issue is in one of these states (`open`, `resolved`, `regressed`, `muted`).
        case state([String])
        /// The issue has one of these levels.
        case level([String])
        /// The issue belongs to one of these apps.
        case app([String])
        /// The issue has an occurrence from a release this matches (``IssueSearch/releaseMatches(_:_:)``).
        case release(String)
        /// The issue has an occurrence of this distinct id.
        case user(String)
        /// A frame of an occurrence has a function containing this.
        case function(String)
        /// The first or last seen time (unix ms) compared with a bound.
        case seen(SeenField, Comparison, Int64)
    }

    /// Which time a `firstSeen:` / `lastSeen:` term compares.
    package enum SeenField: String, Sendable, Hashable {
        case firstSeen = "first_seen"
        case lastSeen = "last_seen"
    }

    /// How a time is compared with its bound.
    package enum Comparison: String, Sendable, Hashable {
        case atOrAfter = ">="
        case after = ">"
        case before = "<"
        case atOrBefore = "<="
    }

    /// The states `is:` accepts.
    package static let states = ["open", "resolved", "regressed", "muted"]
    /// The keys a term may have.
    package static let keys = ["is", "level", "app", "release", "user", "function", "firstSeen", "lastSeen"]
    /// Longest query accepted, in characters (a search is typed, not generated).
    package static let maxLength = 1000
    /// Most terms in one query.
    package static let maxTerms = 32

    /// The terms, in the order written.
    package var terms: [Term]

    /// A search of `terms` (none: every issue).
    package init(terms: [Term] = []) { self.terms = terms }

    /// Parses `text`; relative times count back from `now` (unix ms).
    package static func parse(_ text: String, now: Int64) throws(IssueSearchError) -> IssueSearch {
        guard text.count <= maxLength else {
            throw IssueSearchError(term: String(text.prefix(40)) + "…", reason: "longer than \(maxLength) characters")
        }
        var terms: [Term] = []
        for token in try tokens(text) {
            guard terms.count < maxTerms else {
                throw IssueSearchError(term: token.written, reason: "more than \(maxTerms) terms")
            }
            terms.append(try term(token, now: now))
        }
        return IssueSearch(terms: terms)
    }

    /// One term as written: its key (nil: free text) and its value, unquoted.
    struct Token {
        var written: String
        var key: String?
        var value: String
        var quoted: Bool
    }

    /// Splits on spaces outside quotes; `key:` and a quoted value make one token.
    static func tokens(_ text: String) throws(IssueSearchError) -> [Token] {
        var result: [Token] = []
        var index = text.startIndex
        while index < text.endIndex {
            if text[index].isWhitespace {
                index = text.index(after: index)
                continue
            }
            let start = index
            var key: String?
            // `key:` — letters only, then a colon.
            var scan = index
            while scan < text.endIndex, text[scan].isASCII, text[scan].isLetter { scan = text.index(after: scan) }
            if scan > index, scan < text.endIndex, text[scan] == ":" {
                key = String(text[index..<scan])
                index = text.index(after: scan)
            }
            var value = ""
            var quoted = false
            if index < text.endIndex, text[index] == "\"" {
                quoted = true
                index = text.index(after: index)
                var closed = false
                while index < text.endIndex {
                    if text[index] == "\"" {
                        closed = true
                        index = text.index(after: index)
                        break
                    }
                    if text[index] == "\\", text.index(after: index) < text.endIndex {
                        index = text.index(after: index)
                    }
                    value.append(text[index])
                    index = text.index(after: index)
                }
                guard closed else {
                    throw IssueSearchError(term: String(text[start...]), reason: "the quote is not closed")
                }
                if index < text.endIndex, !text[index].isWhitespace {
                    throw IssueSearchError(
                        term: String(text[start...].prefix { !$0.isWhitespace }),
                        reason: "expected a space after the closing quote")
                }
            } else {
                while index < text.endIndex, !text[index].isWhitespace {
                    value.append(text[index])
                    index = text.index(after: index)
                }
            }
            result.append(Token(written: String(text[start..<index]), key: key, value: value, quoted: quoted))
        }
        return result
    }

    /// The term of one token.
    static func term(_ token: Token, now: Int64) throws(IssueSearchError) -> Term {
        guard let key = token.key else { return .text(token.value) }
        func fail(_ reason: String) -> IssueSearchError { IssueSearchError(term: token.written, reason: reason) }
        guard keys.contains(key) else {
            throw fail(
                "unknown key '\(key)' (known: \(keys.joined(separator: ", ")); quote text with a colon: \"\(key):…\")"
            )
        }
        guard !token.value.isEmpty else { throw fail("\(key): needs a value") }
        let list = token.quoted ? [token.value] : token.value.split(separator: ",").map(String.init)
        guard !list.isEmpty else { throw fail("\(key): needs a value") }
        switch key {
        case "is":
            for state in list where !states.contains(state) {
                throw fail("unknown state '\(state)' (expected \(states.joined(separator: ", ")))")
            }
            return .state(list)
        case "level": return .level(list)
        case "app": return .app(list)
        case "release": return .release(token.value)
        case "user": return .user(token.value)
        case "function": return .function(token.value)
        default:
            let field: SeenField = key == "firstSeen" ? .firstSeen : .lastSeen
            let (comparison, time) = try bound(token.value, now: now, term: token.written)
            return .seen(field, comparison, time)
        }
    }

    /// `-24h`, `+7d`, `>DATE`, `>=DATE`, `<DATE`, `<=DATE`: the comparison and its time, unix ms.
    static func bound(_ value: String, now: Int64, term: String) throws(IssueSearchError) -> (Comparison, Int64) {
        let expected = "expected -24h (within the last 24 hours), +7d (longer ago), or >DATE, <DATE (2026-12-01)"
        if let sign = value.first, sign == "-" || sign == "+" {
            let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
            let digits = value.dropFirst().dropLast()
            guard let unit = value.last.flatMap({ units[$0] }), !digits.isEmpty, digits.allSatisfy(\.isASCII),
                let count = Int64(digits), count >= 0, count <= 100_000 * 365
            else {
                throw IssueSearchError(term: term, reason: expected)
            }
            let from = now - count * unit * 1000
            return (sign == "-" ? .atOrAfter : .before, from)
        }
        for comparison in [Comparison.atOrAfter, .atOrBefore, .after, .before]
        where value.hasPrefix(comparison.rawValue) {
            guard let time = date(String(value.dropFirst(comparison.rawValue.count))) else {
                throw IssueSearchError(term: term, reason: expected)
            }
            return (comparison, time)
        }
        throw IssueSearchError(term: term, reason: expected)
    }

    /// A date (`2026-12-01`, midnight UTC) or an ISO 8601 time (fractional seconds and an offset allowed), from
    /// 1970 to 9999; unix ms. The one date reader of the search and the CLI's `--since`/`--until`.
    package static func date(_ text: String) -> Int64? {
        let full = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        for formatter in [full, fractional, day] {
            if let date = formatter.date(from: text), date.timeIntervalSince1970 >= 0,
                date.timeIntervalSince1970 < 253_402_300_800
            {
                return Int64(date.timeIntervalSince1970 * 1000)
            }
        }
        return nil
    }

    /// Whether `release` is what a release filter `pattern` asks for: the release itself, or a release it is a
    /// prefix of up to a separator (`@`, `.`, `-`, `+`: `MyApp` matches `MyApp@1.2.0`, `1.2` matches `1.2.3`, not
    /// `1.20`), or a release whose version after `name@` is such (`1.2.0` matches `MyApp@1.2.0`).
    package static func releaseMatches(_ release: String, _ pattern: String) -> Bool {
        func prefixMatch(_ text: Substring) -> Bool {
            guard text.hasPrefix(pattern) else { return false }
            let rest = text.dropFirst(pattern.count)
            return rest.isEmpty || pattern.isEmpty || "@.-+".contains(rest.first ?? " ")
        }
        guard !pattern.isEmpty else { return false }
        if prefixMatch(release[...]) { return true }
        guard let at = release.firstIndex(of: "@") else { return false }
        return prefixMatch(release[release.index(after: at)...])
    }
}

/// A query that does not parse: the term and why.
package struct IssueSearchError: Error, Equatable, CustomStringConvertible {
    /// The term as written.
    package var term: String
    /// What is wrong with it.
    package var reason: String

    /// `invalid search term 'is:closed': unknown state 'closed' (…)`.
    package var description: String { "invalid search term '\(term)': \(reason)" }
}
