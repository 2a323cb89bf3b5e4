import CohorlyCrash
import Foundation

/// `CohorlyCrashBench read-report tree|stream|event-tree|event-stream FILE`: what `scripts/bench-symbolicate
/// --input-memory` measures. Reads a report file (or an `$exception` event: `event-…`) into the crash
/// (`CapturedException`, as `cohorly symbolicate` does) either the old way, through a JSON tree of the whole file
/// (`CohorlyValue(bytes:)`, then the reader of a parsed document), or straight from the bytes
/// (`CrashReport.read(_ bytes:)`, `CapturedException.readEvent`), and prints the frames kept and this process's
/// peak resident memory (VmHWM) in KiB. Not a test.
func readReport(mode: String, path: String) -> Int32 {
    do {
        // The file's bytes alone (the Data they came in is gone before the reading starts).
        let bytes: [UInt8] = try {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CrashReportError.corrupt(reason: "cannot read")
            }
            return [UInt8](data)
        }()
        let crash: CapturedException
        switch mode {
        case "tree":
            guard let document = CohorlyValue(bytes: bytes) else { throw CrashReportError.corrupt(reason: "not JSON") }
            crash = CapturedException(report: try CrashReport.read(document, requiringHeader: false))
        case "event-tree":
            guard let document = CohorlyValue(bytes: bytes) else { throw CrashReportError.corrupt(reason: "not JSON") }
            crash = CapturedException(exceptionEvent: document["properties"] ?? document)
        case "event-stream":
            guard
                let event = try CohorlyValue.read(
                    bytes,
                    { reader throws(JSONReadError) in
                        try CapturedException.readEvent(&reader)
                    })
            else { throw CrashReportError.corrupt(reason: "not an $exception event") }
            crash = event.crash
        default: crash = CapturedException(report: try CrashReport.read(bytes, requiringHeader: false))
        }
        let frames = crash.threads.reduce(0) { $0 + $1.frames.count }
        print("\(mode) frames=\(frames) peak_kib=\(peakKiB())")
        return 0
    } catch {
        print("\(mode) error: \(error)")
        return 1
    }
}

/// VmHWM from /proc/self/status, in KiB.
private func peakKiB() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
}
