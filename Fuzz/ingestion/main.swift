// Fuzz target `ingestion`: the collector's request handling for ingestion bodies — `Ingestion.handle` for
// `/track`, `/engage` and `/alias` (JSON parse, batch and record validation, token check, SQLite insert into
// an in-memory store), then, for an accepted `/track` body, the crash read side's parse of each record's
// properties (`CrashQueries.input(from:)`, what `GET /api/crashes/<id>` feeds the symbolicator).
//
// An input that starts with a request line (`GET /api/crashes?limit=-1 HTTP/1.1`, see
// `HTTPRequest(raw:)`) is instead a whole request: screened and routed as the server would (`Router.answer`), so
// query parameters, headers and admin bodies are fuzzed too (the attack requests of fixtures/fuzz/ingestion/request-*),
// and Sentry envelopes (`POST /api/1/envelope/`, request-sentry-envelope-*: the framing parser, then the stored
// crash read back).
//
// Checked beyond "no crash": no input gets a 5xx (a storage error is a bug, not bad input), and every
// response body is JSON (but the web pages' HTML).
import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlySentryIngestion

nonisolated(unsafe) var ingestion: Ingestion?
nonisolated(unsafe) var router: Router?
nonisolated(unsafe) var runs = 0

func freshRouter() -> Router {
    var configuration = CollectorConfiguration()
    configuration.tokens = ["fuzz-token"]
    configuration.adminToken = "fuzz-secret"
    guard let store = try? CollectorStore(directory: nil), let debugFiles = try? DebugFileStore(directory: nil) else {
        fatalError("cannot open in-memory stores")
    }
    return Router(
        ingestion: Ingestion(store: store, configuration: configuration), store: store, debugFiles: debugFiles,
        faults: FaultInjector(), configuration: configuration, rateLimiter: nil, wires: CollectorWires.all)
}

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
    if let request = HTTPRequest(raw: body) {
        if router == nil || runs % 2000 == 0 { router = freshRouter() }
        let response = router!.answer(request, port: 4000)
        router!.faults.clear()  // an injected delay must not hold the next input
        guard let response else { return 0 }  // an injected dropped connection
        guard response.status < 500 else {
            fatalError("\(request.path) answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        // The web pages answer HTML (their refusals too); every other route JSON.
        guard JSONValue(bytes: response.body) != nil || Router.isWebPath(request.path) else {
            fatalError("\(request.path) answered non-JSON: \(String(decoding: response.body, as: UTF8.self))")
        }
        // An accepted Sentry envelope: its crash is read back as `GET /api/crashes/<id>` reads it.
        if response.status == 200, SentryIngestion.projectId(request.path) != nil,
            let id = JSONValue(bytes: response.body)?["id"]?.stringValue.flatMap(SentryEnvelope.eventId),
            let stored = try? router!.store.events(matching: EventQuery(insertId: id, limit: 1)).first
        {
            _ = CrashQueries.input(from: JSONValue(json: stored.propertiesJSON) ?? .null)
        }
        return 0
    }
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
