import Cohorly

extension ExceptionBuilder {
    /// The exception type of every hang event: PostHog groups hangs by it and the in-app frames of the hung
    /// thread.
    public static let hangType = CrashReason.hangType

    /// Type, value, mechanism and issue name of a hang (``CrashReason/describeHang(_:diedHung:)``).
    static func describeHang(_ hang: CrashReport.Hang, diedHung: Bool) -> Description {
        CrashReason.describeHang(hang, diedHung: diedHung)
    }

    /// The properties every hang event carries: `$exception_hang_duration_ms`, `$exception_hang_subject`,
    /// `$exception_hang_kind`, `$exception_hang_threshold_ms`.
    static func hangProperties(_ hang: CrashReport.Hang) -> Properties {
        [
            "$exception_hang_duration_ms": .int(Int(clamping: hang.durationMs)),
            "$exception_hang_subject": .string(hang.subject), "$exception_hang_kind": .string(hang.kind),
            "$exception_hang_threshold_ms": .int(Int(clamping: hang.thresholdMs)),
        ]
    }

    /// The mechanism's `meta` for a hang (instead of a signal's).
    static func hangMeta(_ hang: CrashReport.Hang) -> Properties {
        ["hang": ["duration_ms": .int(Int(clamping: hang.durationMs)), "subject": .string(hang.subject)]]
    }
}
