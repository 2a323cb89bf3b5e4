import CCrashRecorder
import Cohorly

#if canImport(Glibc)
    import Glibc
#endif

/// The launch marker file, `launch-<insert id>.marker` in the report directory (mode 0600), in fixed regions so
/// that each update is one `pwrite` and a reader never needs the whole file to be consistent:
///
/// | offset | bytes | holds |
/// |---|---|---|
/// | 0 | 4096 | the launch: a JSON object written once, before the file gets its name |
/// | 4096 | 256 | the last memory sample: `{"rss_bytes":…,"peak_rss_bytes":…,"sampled_ms":…,"opted_out":…}` |
/// | 4352 | 192 | the termination record, written by the termination monitor (cly_termination.c) in the signal handler: `{"signal":15,"state":"ended","code":0,"sender_pid":…,"sender_uid":…,"ms":…}` (spaces until then) |
/// | 8192 | 2 × (64 + CLY_MAX_CONTEXT) | two context slots, written alternately |
///
/// A context slot is a 64-byte header `<generation> <length> <FNV-1a 64 of the bytes, hex>` then the context's
/// JSON: a reader takes the valid slot of the highest generation, so a launch killed while it rewrote its
/// context still has the previous one. Regions are padded with spaces.
struct LaunchRecord: Equatable, Sendable {
    static let format = "cohorly-launch/1"
    static let namePrefix = "launch-"
    static let nameSuffix = ".marker"
    static let launchOffset = 0
    static let launchBytes = 4096
    static let memoryOffset = 4096
    static let memoryBytes = 256
    static let endingOffset = Int(CLY_LAUNCH_MARKER_ENDING_OFFSET)
    static let endingBytes = Int(CLY_LAUNCH_MARKER_ENDING_BYTES)
    static let slotHeaderBytes = 64
    static let slotBytes = slotHeaderBytes + Int(CLY_MAX_CONTEXT)
    static let slotOffsets = [8192, 8192 + slotBytes]

    /// The launch's `$insert_id` (the recorder's, `cly_current_insert_id`).
    var insertId: String
    var pid: Int32
    /// Start time of the process in clock ticks after boot (`/proc/<pid>/stat`).
    var startTicks: UInt64
    /// `/proc/sys/kernel/random/boot_id` of the boot it ran in.
    var bootId: String
    var executable: String
    /// Unix ms when the marker was made.
    var startedMs: UInt64
    /// The OOM-kill counters of its memory cgroups when it started.
    var oomCounters: [CgroupMemory.Counter]
    /// The last memory sample (nil before the first).
    var memory: MemorySample?
    /// Whether the user was opted out at the last sample (then an abnormal exit is not reported).
    var optedOut = false
    /// The crash-time context as the launch last set it (a JSON object), empty when none was readable.
    var context: [String: CohorlyValue] = [:]
    /// The last termination signal the launch got (nil: none, or the monitor was not installed).
    var termination: Termination?

    /// The last moment the launch was known alive: its last memory sample or termination signal, else its start.
    var lastAliveMs: UInt64 { max(memory?.sampledMs ?? startedMs, termination?.ms ?? 0) }

    /// What the termination monitor recorded: a termination signal and how far it got.
    struct Termination: Equatable, Sendable {
        /// How far the signal got.
        enum State: String, Sendable {
            /// Its action was the default one: the process died of it.
            case ended
            /// The app's handler for it was running (it may have ended the launch itself, with `_exit`).
            case handling
            /// The app's handler returned: the launch went on after the signal.
            case handled
        }

        var signal: Int32
        var state: State
        /// `si_code` (0 `SI_USER`: sent with kill; 128 `SI_KERNEL`: a terminal's SIGINT/SIGHUP, …).
        var code: Int32
        /// The sender's pid and uid when a process sent it.
        var senderPid: Int32?
        var senderUid: UInt32?
        /// Unix ms when it arrived.
        var ms: UInt64

        /// `SIGTERM`, `SIGINT`, … (`signal 40` for another number).
        var signalName: String {
            switch signal {
            case SIGTERM: "SIGTERM"
            case SIGINT: "SIGINT"
            case SIGHUP: "SIGHUP"
            case SIGQUIT: "SIGQUIT"
            case SIGUSR1: "SIGUSR1"
            case SIGUSR2: "SIGUSR2"
            default: "signal \(signal)"
            }
        }

        /// Reads a record (nil for the spaces of a marker no signal wrote to).
        init?(json: String) {
            guard let object = CohorlyValue(json: json)?.objectValue,
                let signal = object["signal"]?.intValue.flatMap(Int32.init(exactly:)),
                let state = object["state"]?.stringValue.flatMap(State.init(rawValue:))
            else { return nil }
            self.signal = signal
            self.state = state
            code = object["code"]?.intValue.flatMap(Int32.init(exactly:)) ?? 0
            senderPid = object["sender_pid"]?.intValue.flatMap(Int32.init(exactly:))
            senderUid = object["sender_uid"]?.intValue.flatMap(UInt32.init(exactly:))
            ms = UInt64(clamping: object["ms"]?.intValue ?? 0)
        }
    }

    /// A memory sample.
    struct MemorySample: Equatable, Sendable {
        var residentBytes: UInt64
        var peakResidentBytes: UInt64
        var sampledMs: UInt64
    }

    /// The marker's file name.
    static func fileName(insertId: String) -> String { namePrefix + insertId + nameSuffix }

    /// Whether `name` is a marker's name.
    static func isMarkerName(_ name: String) -> Bool {
        name.hasPrefix(namePrefix) && name.hasSuffix(nameSuffix) && name.utf8.count > 20
    }

    // MARK: - Encoding

    /// The launch region's JSON.
    var launchJSON: String {
        let counters: [CohorlyValue] = oomCounters.map {
            [
                "file": .string($0.file), "inode": .string(String($0.directoryInode)),
                "oom_kill": .string(String($0.kills)),
            ]
        }
        let object: Properties = [
            "format": .string(Self.format), "insert_id": .string(insertId), "pid": .int(Int(pid)),
            "start_ticks": .string(String(startTicks)), "boot_id": .string(bootId), "executable": .string(executable),
            "started_ms": .string(String(startedMs)), "oom_counters": .array(counters),
        ]
        return CohorlyValue.object(object).jsonString
    }

    static func memoryJSON(_ sample: MemorySample, optedOut: Bool) -> String {
        "{\"rss_bytes\":\(sample.residentBytes),\"peak_rss_bytes\":\(sample.peakResidentBytes),"
            + "\"sampled_ms\":\(sample.sampledMs),\"opted_out\":\(optedOut)}"
    }

    /// A context slot: header then the JSON bytes.
    static func slot(generation: UInt64, context: [UInt8]) -> [UInt8] {
        let header = "\(generation) \(context.count) \(String(fnv1a(context), radix: 16))\n"
        return padded(Array(header.utf8), to: slotHeaderBytes) + context
    }

    /// `bytes` followed by spaces up to `size` (a newline last).
    static func padded(_ bytes: [UInt8], to size: Int) -> [UInt8] {
        guard bytes.count < size else { return bytes }
        return bytes + [UInt8](repeating: UInt8(ascii: " "), count: size - bytes.count - 1) + [UInt8(ascii: "\n")]
    }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    // MARK: - Decoding

    /// Reads a marker from its open descriptor; nil when the launch region is not a marker of this format.
    static func read(fd: Int32) -> LaunchRecord? {
        guard let launch = CohorlyValue(json: text(fd, at: launchOffset, count: launchBytes))?.objectValue,
            launch["format"]?.stringValue == format, let insertId = launch["insert_id"]?.stringValue,
            let pid = launch["pid"]?.intValue.flatMap(Int32.init(exactly:))
        else { return nil }
        func number(_ value: CohorlyValue?) -> UInt64 { value?.stringValue.flatMap { UInt64($0) } ?? 0 }
        let counters = (launch["oom_counters"]?.arrayValue ?? []).compactMap { value -> CgroupMemory.Counter? in
            guard let file = value["file"]?.stringValue else { return nil }
            return CgroupMemory.Counter(
                file: file, directoryInode: number(value["inode"]), kills: number(value["oom_kill"]))
        }
        var record = LaunchRecord(
            insertId: insertId, pid: pid, startTicks: number(launch["start_ticks"]),
            bootId: launch["boot_id"]?.stringValue ?? "", executable: launch["executable"]?.stringValue ?? "",
            startedMs: number(launch["started_ms"]), oomCounters: counters)
        if let memory = CohorlyValue(json: text(fd, at: memoryOffset, count: memoryBytes))?.objectValue,
            let rss = memory["rss_bytes"]?.intValue, let sampled = memory["sampled_ms"]?.intValue
        {
            record.memory = MemorySample(
                residentBytes: UInt64(clamping: rss),
                peakResidentBytes: UInt64(clamping: memory["peak_rss_bytes"]?.intValue ?? rss),
                sampledMs: UInt64(clamping: sampled))
            record.optedOut = memory["opted_out"] == true
        }
        record.context = newestContext(fd) ?? [:]
        record.termination = Termination(json: text(fd, at: endingOffset, count: endingBytes))
        return record
    }

    /// The valid context slot of the highest generation.
    static func newestContext(_ fd: Int32) -> [String: CohorlyValue]? {
        var best: (generation: UInt64, context: [String: CohorlyValue])?
        for offset in slotOffsets {
            let header = text(fd, at: offset, count: slotHeaderBytes).split(separator: " ")
            guard header.count >= 3, let generation = UInt64(header[0]), let length = Int(header[1]),
                length <= Int(CLY_MAX_CONTEXT),
                let hash = UInt64(header[2].prefix { $0 != "\n" }, radix: 16)
            else { continue }
            let body = bytes(fd, at: offset + slotHeaderBytes, count: length)
            guard body.count == length, fnv1a(body) == hash, generation >= (best?.generation ?? 0),
                let context = CohorlyValue(json: String(decoding: body, as: UTF8.self))?.objectValue
            else { continue }
            best = (generation, context)
        }
        return best?.context
    }

    static func bytes(_ fd: Int32, at offset: Int, count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        return Array(buffer.prefix(max(got, 0)))
    }

    static func text(_ fd: Int32, at offset: Int, count: Int) -> String {
        String(decoding: bytes(fd, at: offset, count: count).prefix { $0 != 0 }, as: UTF8.self)
    }
}
