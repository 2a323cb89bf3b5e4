// Fuzz target `ingestion`: the collector's request handling for ingestion bodies — `Ingestion.handle` for
// `/track`, `/engage` and `/alias` (JSON parse, batch and record validation, token check, SQLite insert into
// an in-memory store), then, for an accepted `/track` body, the crash read side's parse of each record's
// properties (`CrashQueries.input(from:)`, what `GET /api/crashes/<id>` feeds the symbolicator).
//
// Checked beyond "no crash": no body gets a 5xx (a storage error is a bug, not bad input), and every
// response body is JSON.
@testable import CohorlyCollector

nonisolated(unsafe) var ingestion: Ingestion?
nonisolated(unsafe) var runs = 0

func freshIngestion() -> Ingestion {
    var configuration = CollectorConfiguration()
    configuration.tokens = ["fuzz-token"]
    guard let store = try? CollectorStore(directory: nil) else { fatalError("cannot open an in-memory store") }
    return Ingestion(store: store, configuration: configuration)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIngestion(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // A fresh in-memory database now and then, so accepted bodies do not pile up for the whole run.
    if ingestion == nil || runs % 2000 == 0 { ingestion = freshIngestion() }
    runs += 1
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    for (kind, path) in [(Ingestion.Kind.track, "/track"), (.engage, "/engage"), (.alias, "/alias")] {
        let request = HTTPRequest(
            method: "POST", path: path,
            headers: ["content-type": "application/json", "x-cohorly-token": "fuzz-token"], body: body)
        let response = ingestion!.handle(kind, request)
        guard response.status < 500 else {
            fatalError("\(path) answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        guard JSONValue(bytes: response.body) != nil else {
            fatalError("\(path) answered non-JSON: \(String(decoding: response.body, as: UTF8.self))")
        }
        if kind == .track, response.status == 200, let document = JSONValue(bytes: body) {
            let records = document.arrayValue ?? [document]
            for record in records {
                if let properties = record["properties"] { _ = CrashQueries.input(from: properties) }
            }
        }
    }
    return 0
}
