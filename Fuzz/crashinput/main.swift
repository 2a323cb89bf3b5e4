// Fuzz target `crashinput`: the crash model's reading of report bytes straight into the model
// (`CrashReport.read(_ bytes:)`, a `JSONReader` walk) and the reader under it. Checked beyond "no crash":
// the report read from the bytes equals the one read from their parsed tree (`CrashReport.read(CohorlyValue)`),
// error for error; the bytes read as a whole value (`JSONReader.readValue`) exactly when `CohorlyValue(bytes:)`
// parses them, to the same value; and skipping them (`skipValue`) succeeds exactly then too.
import CohorlyJSON

@testable import CohorlyCrashModel

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCrashInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let tree = CohorlyValue(bytes: bytes)
    let whole = try? CohorlyValue.read(bytes) { reader throws(JSONReadError) in try reader.readValue() }
    guard whole == tree else {
        fatalError("readValue gave \(String(describing: whole)), the parser \(String(describing: tree))")
    }
    let skipped = (try? CohorlyValue.read(bytes) { reader throws(JSONReadError) in try reader.skipValue() }) != nil
    guard skipped == (tree != nil) else {
        fatalError("skipValue \(skipped ? "accepted" : "refused") it, the parser did not")
    }
    for requiringHeader in [false, true] {
        let streamed = Result { () throws(CrashReportError) in
            try CrashReport.read(bytes, requiringHeader: requiringHeader)
        }
        guard let tree else {
            guard case .failure(.corrupt(let reason)) = streamed,
                reason.hasPrefix("invalid JSON at byte ") || reason.hasPrefix("JSON nested deeper than")
            else { fatalError("not JSON, but read as \(streamed)") }
            continue
        }
        let read = Result { () throws(CrashReportError) in try CrashReport.read(tree, requiringHeader: requiringHeader)
        }
        guard streamed == read else { fatalError("read from the bytes: \(streamed)\nfrom the tree: \(read)") }
    }
    return 0
}
