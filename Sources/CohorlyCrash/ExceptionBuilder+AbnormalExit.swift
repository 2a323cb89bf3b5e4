import Cohorly

extension ExceptionBuilder {
    /// The exception type of an OOM kill.
    static let oomKillType = "OOMKill"
    /// The exception type of any other abnormal exit.
    static let abnormalExitType = "AbnormalExit"

    /// The event for a launch that ended abnormally (``AbnormalExits``): level `fatal`, mechanism
    /// `abnormal_exit` (handled false), the launch's own `$insert_id` (stable if it is sent again), its crash-time
    /// context as it last set it (release, identity, super properties, flags — the same properties a crash
    /// event carries), its last known resident memory, and the cause. No stack: nothing ran in the process when
    /// it was killed, so the exception has no `stacktrace` and its `value` says so. `time` is the last moment
    /// the launch was known alive (its last memory sample).
    static func abnormalExit(_ record: LaunchRecord, cause: AbnormalExits.Cause, rebooted: Bool) -> QueuedException {
        var properties = contextProperties(record.context)
        let type: String
        var value: String
        switch cause {
        case .oomKill:
            type = oomKillType
            value = "Killed by the kernel's OOM killer: the memory cgroup's oom_kill counter rose during the launch"
        case .killedOrLostPower, .killedAfterTerminationSignal:
            type = abnormalExitType
            value = abnormalExitValue(record, rebooted: rebooted)
        }
        value += ". No stack trace: the process got no chance to record one."
        let lastAlive = record.lastAliveMs
        let description = CrashDescription(
            type: type, value: value, mechanism: "abnormal_exit",
            issueName: cause == .oomKill ? "Out of memory (OOM kill)" : "Abnormal exit")
        var exception = CapturedException(
            description: description, facts: CrashReason.Facts(given: description), level: "fatal", handled: false)
        exception.hasStack = false
        exception.timestampMs = Int64(clamping: lastAlive)
        exception.insertId = record.insertId
        exception.executable = record.executable
        properties["$exception_abnormal_exit_cause"] = .string(cause.rawValue)
        if rebooted { properties["$exception_rebooted"] = true }
        if let termination = record.termination {
            properties["$exception_termination_signal"] = .string(termination.signalName)
            if let sender = termination.senderPid {
                properties["$exception_termination_sender_pid"] = .int(Int(sender))
            }
        }
        properties["$exception_pid"] = .int(Int(record.pid))
        properties["$exception_launch_started_ms"] = .int(Int(clamping: record.startedMs))
        if let memory = record.memory {
            properties["$exception_last_rss_bytes"] = .int(Int(clamping: memory.residentBytes))
            properties["$exception_peak_rss_bytes"] = .int(Int(clamping: memory.peakResidentBytes))
            properties["$exception_last_rss_ms"] = .int(Int(clamping: memory.sampledMs))
        }
        if let cgroup = record.oomCounters.first {
            properties["$exception_cgroup_oom_file"] = .string(cgroup.file)
        }
        exception.properties = properties
        return Self.record(exception)
    }

    /// What is known of an abnormal exit that was no OOM kill: whether the machine restarted (the boot id), a
    /// termination signal the app handled before, and that nothing else was seen — never a guess among them.
    static func abnormalExitValue(_ record: LaunchRecord, rebooted: Bool) -> String {
        if rebooted {
            return "The machine restarted while the launch ran (its boot id changed): a power loss, a reboot or a"
                + " kernel crash ended it"
        }
        let known = !record.bootId.isEmpty && record.bootId == ProcessFacts.bootId()
        var value =
            known
            ? "Ended without a normal exit, a crash report or a termination signal, in the same boot (no power loss"
                + " or reboot): killed by SIGKILL or another signal the recorder does not catch, or ended by _exit()"
            : "Ended without a normal exit, a crash report or a termination signal: killed (SIGKILL or another"
                + " signal the recorder does not catch), ended by _exit(), or the machine lost power"
        if let termination = record.termination {
            let sender = termination.senderPid.map { " from pid \($0)" } ?? ""
            let seconds = Double(Int64(clamping: record.lastAliveMs) - Int64(clamping: termination.ms)) / 1000
            value =
                "The app handled \(termination.signalName)\(sender) and went on; the launch then ended without a"
                + " normal exit or a crash report"
                + (seconds > 0
                    ? " (last seen alive \(seconds.formatted(.number.precision(.fractionLength(1)))) s after the signal)"
                    : "")
                + ": killed by SIGKILL (a stop timeout, e.g. docker stop's 10 s) or another signal the recorder does not"
                + " catch, or ended by _exit()"
        }
        return value
    }
}
