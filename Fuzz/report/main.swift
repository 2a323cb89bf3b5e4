// Fuzz target `report`: the crash report reader. `CrashReport.decode` on the bytes, then the torn-file
// salvager (`CrashReportSalvager.repair`) and a decode of what it returns — the path every report file on
// disk takes at the next launch.
//
// Checked beyond "no crash": a decoded report re-encodes to an equal report, and when the input is valid
// UTF-8 JSON, every prefix of it (a report cut short by a dying process) repairs to valid JSON or to nothing.
import Foundation

@testable import CohorlyCrash

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReport(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    if var report = try? CrashReport.decode(bytes) {
        let encoded = Data(report.fileBytes)
        // Written as the current format whatever format it was read from.
        report.format = CrashReportFormat.current
        guard let again = try? CrashReport.decode(encoded), again == report else {
            fatalError("encode → decode changed the report: \(String(decoding: encoded, as: UTF8.self))")
        }
    }
    if let repaired = CrashReportSalvager.repair(bytes) {
        _ = try? CrashReport.decode(repaired.json)
    }
    // Report files are UTF-8 (JSONSerialization would also take UTF-16/32, guessed from NUL bytes).
    let utf8 = !bytes.contains(0) && String(validating: Array(bytes), as: UTF8.self) != nil
    if size > 1, utf8, (try? JSONSerialization.jsonObject(with: bytes, options: [.fragmentsAllowed])) != nil {
        // Up to 32 cut points spread over the document.
        let step = max(1, size / 32)
        for cut in stride(from: 1, to: size, by: step) {
            let prefix = bytes.prefix(cut)
            guard let repaired = CrashReportSalvager.repair(prefix) else { continue }
            if (try? JSONSerialization.jsonObject(with: repaired.json, options: [.fragmentsAllowed])) == nil {
                fatalError(
                    "prefix of \(cut) bytes repaired to invalid JSON: \(String(decoding: repaired.json, as: UTF8.self))"
                )
            }
        }
    }
    return 0
}
