/// How two releases compare, for "resolved in release R, seen again in a later one": by semantic version when
/// both parse as one, else by the order the collector first saw them (an occurrence's release is recorded when
/// it first arrives; a release named by `resolve --in-release` that no occurrence had is recorded then).
///
/// A version parses when, after an optional `name@` prefix (Sentry's `package@version`) and an optional `v`, it is
/// one to three dot-separated decimal numbers (missing ones are 0), then optionally `-prerelease` and `+build`.
/// Precedence is SemVer 2.0's: numbers, then a release after its prereleases, prerelease identifiers compared
/// numerically when both are numbers, else as ASCII text, a shorter list first; build metadata is ignored. The
/// `name@` prefixes must be equal for two versions to compare as versions.
struct ReleaseVersion: Comparable, Sendable {
    var prefix: Substring
    var numbers: [UInt64]
    var prerelease: [Substring]

    /// The version `text` names, or nil when it is not one.
    init?(_ text: String) {
        var rest = Substring(text)
        if let at = rest.lastIndex(of: "@") {
            prefix = rest[..<at]
            rest = rest[rest.index(after: at)...]
        } else {
            prefix = ""
        }
        if rest.first == "v" || rest.first == "V" { rest = rest.dropFirst() }
        if let plus = rest.firstIndex(of: "+") { rest = rest[..<plus] }
        var core = rest
        prerelease = []
        if let dash = rest.firstIndex(of: "-") {
            core = rest[..<dash]
            let tail = rest[rest.index(after: dash)...]
            prerelease = tail.split(separator: ".", omittingEmptySubsequences: false)
            guard prerelease.allSatisfy({ !$0.isEmpty }) else { return nil }
        }
        let parts = core.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard !part.isEmpty, part.allSatisfy(\.isASCII), let number = UInt64(part) else { return nil }
            numbers.append(number)
        }
        while numbers.count < 3 { numbers.append(0) }
        self.numbers = numbers
    }

    static func < (left: ReleaseVersion, right: ReleaseVersion) -> Bool {
        if left.numbers != right.numbers { return left.numbers.lexicographicallyPrecedes(right.numbers) }
        switch (left.prerelease.isEmpty, right.prerelease.isEmpty) {
        case (true, _): return false
        case (false, true): return true
        case (false, false): break
        }
        for (a, b) in zip(left.prerelease, right.prerelease) where a != b {
            switch (UInt64(a), UInt64(b)) {
            case (let x?, let y?): return x < y
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a < b
            }
        }
        return left.prerelease.count < right.prerelease.count
    }

    static func == (left: ReleaseVersion, right: ReleaseVersion) -> Bool {
        left.numbers == right.numbers && left.prerelease == right.prerelease
    }
}

enum ReleaseOrder {
    /// Whether `release` comes after `resolved`: as versions when both parse (with equal prefixes), else by first
    /// arrival (`arrival` gives a release's arrival rank; a release with none comes after every one that has one).
    static func isLater(
        _ release: String, than resolved: String, arrival: (String) throws -> Int64?
    ) rethrows -> Bool {
        if release == resolved { return false }
        if let new = ReleaseVersion(release), let old = ReleaseVersion(resolved), new.prefix == old.prefix {
            return old < new
        }
        let new = try arrival(release) ?? Int64.max
        let old = try arrival(resolved) ?? Int64.max
        return old < new
    }
}
