/// The ranges the read API accepts (the CLI checks its `--limit` against them too).
public enum QueryLimits {
    /// `limit=` on every list route: 0...100,000.
    public static let limit = 0...100_000
    /// `after=` (a row id).
    package static let rowId = 0...Int(Int64.max)
}
