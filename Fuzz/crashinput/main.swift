// Fuzz target `crashinput`: the crash model's reading of report bytes straight into the model
// (`CrashReport.read(_ bytes:)`, a `JSONReader` walk) and the reader under it. Checked beyond "no crash":
// the report read from the bytes equals the one read from their parsed tree (`CrashReport.read(CohorlyValue)`),
// error for error; the bytes read as a whole value (`JSONReader.readValue`) exactly when `CohorlyValue(bytes:)`
// parses them, to the same value; and skipping them (`skipValue`) succeeds exactly then too. The same bytes read as
// an `$exception` event (`CapturedException.readEvent`) give the crash, id and release `cohorly symbolicate` took
// from the parsed tree (`CapturedException(exceptionEvent:)` of the properties).
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
    // The same bytes as an `$exception` event (or its bare properties): read straight from the bytes, and from
    // the parsed tree as `cohorly symbolicate` read it before.
    let streamed = Result { () throws(JSONReadError) in
        try CohorlyValue.read(bytes) { reader throws(JSONReadError) in try CapturedException.readEvent(&reader) }
    }
    if let tree {
        let properties = tree["properties"] ?? tree
        let isEvent =
            tree.objectValue != nil && properties["$exception_list"]?.arrayValue != nil
            && (tree["event"] == nil || tree["event"] == .string("$exception"))
        let id = (tree["uuid"] ?? tree["insert_id"] ?? properties["$insert_id"])?.stringValue
        let release = properties["release"]?.stringValue ?? properties["$app_version"]?.stringValue
        switch streamed {
        case .success(let event?):
            guard isEvent, event.crash == CapturedException(exceptionEvent: properties), event.id == id,
                event.release == release
            else { fatalError("the event read from the bytes differs from the one read from the tree") }
        case .success(nil): guard !isEvent else { fatalError("an $exception event not read from the bytes") }
        case .failure: fatalError("valid JSON, but the event reader failed")
        }
    } else if case .success = streamed {
        fatalError("not JSON, but read as an event")
    }
    return 0
}
