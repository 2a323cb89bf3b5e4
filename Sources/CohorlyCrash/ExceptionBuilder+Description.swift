import CohorlySymbols

extension ExceptionBuilder {
    /// Exception type, value, mechanism and issue name, as an issue list shows them (the crash model's).
    public typealias Description = CrashDescription

    /// The most specific reason known (``CrashReason/describe(_:crashSite:)``, the one place that decides it):
    /// the hang, the uncaught C++ exception, the Swift fatal-error message, a `Swift runtime failure: …` inlined
    /// frame at the crash site (a release build's trap, found when the crash site was symbolicated: `crashSite`
    /// holds its frames), else the signal.
    public static func describe(_ report: CrashReport, crashSite: [SymbolicatedFrame]? = nil) -> Description {
        CrashReason.describe(CrashReason.Facts(report: report), crashSite: crashSite?.map(\.function) ?? [])
    }
}
