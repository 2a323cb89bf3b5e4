// Fuzz target `json`: CohorlyJSON's parser (what the collector runs on every request body and the client on
// every stored event). Checks that parsing never crashes and that a parsed value survives write → parse.
import CohorlyJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let fromBytes = CohorlyValue(bytes: bytes)
    // The String entry point sees the same bytes after UTF-8 repair.
    let fromString = CohorlyValue(json: String(decoding: bytes, as: UTF8.self))
    for value in [fromBytes, fromString].compactMap({ $0 }) {
        let text = value.jsonString
        guard let again = CohorlyValue(json: text) else {
            fatalError("written JSON does not parse: \(text)")
        }
        guard again == value else { fatalError("write → parse changed the value: \(text)") }
        guard again.jsonString == text else { fatalError("writing is not stable: \(text)") }
    }
    return 0
}
