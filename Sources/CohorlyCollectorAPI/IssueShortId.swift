/// An issue's short id, per app: the app's name in capitals and the issue's number in that app (`MYAPP-12`), as
/// Sentry names its issues by project. The row id stays the issue's id; the short id is another name for it that
/// the page, the API (`short_id`) and the CLI show, and that `GET /api/issues/<short id>` and `cohorly issues show`
/// accept (docs/issues.md, "Apps").
package enum IssueShortId {
    /// The prefix of an issue without an app (an event without `$app_name` nor a Sentry project).
    package static let noApp = "ISSUE"
    /// Longest prefix kept.
    package static let maxPrefix = 32

    /// The prefix of `app`'s issues: its ASCII letters and digits in capitals, each run of other characters one
    /// `-` (`my app` → `MY-APP`), at most ``maxPrefix`` characters; ``noApp`` when nothing is left. Apps whose
    /// names give one prefix share its numbers, so a short id names one issue.
    package static func prefix(app: String) -> String {
        var out = ""
        var pendingDash = false
        for byte in app.utf8 {
            let isAlphanumeric =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                || (byte >= 0x61 && byte <= 0x7A)
            guard isAlphanumeric else {
                pendingDash = !out.isEmpty
                continue
            }
            if pendingDash { out.append("-") }
            pendingDash = false
            out.append(Character(Unicode.Scalar(byte >= 0x61 ? byte - 0x20 : byte)))
            if out.count >= maxPrefix { break }
        }
        while out.hasSuffix("-") { out.removeLast() }
        return out.isEmpty ? noApp : out
    }

    /// `text` as a short id, in capitals (`myapp-12` → `MYAPP-12`), when it is one: a prefix, `-`, a number ≥ 1.
    package static func normalized(_ text: String) -> String? {
        guard let dash = text.lastIndex(of: "-") else { return nil }
        let prefix = text[..<dash]
        let number = text[text.index(after: dash)...]
        guard !prefix.isEmpty, prefix.count <= maxPrefix, !number.isEmpty, number.count <= 18,
            number.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(number), value > 0,
            prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else { return nil }
        return prefix.uppercased() + "-" + String(value)
    }
}
