/// The report format tags (docs/report-format.md): defined here once, for the Swift writers and every reader.
public enum CrashReportFormat {
    /// Format 1: frames as bare address strings (frame 0 exact, the rest return addresses), no async chains.
    public static let v1 = "cohorly-crash/1"
    /// Format 2: frames as `{addr, kind}` objects, optional per-thread `async` chains.
    public static let v2 = "cohorly-crash/2"
    /// What the Swift writers (hang file, salvager) write.
    public static let current = v2
    /// Every format this reader understands.
    public static let readable: Set<String> = [v1, v2]
}
