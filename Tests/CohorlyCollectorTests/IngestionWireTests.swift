import Foundation
import Synchronization
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The seam vendors' wires enter the collector by (IngestionWire.swift): path patterns, a registered wire's routes
/// screened and answered as the wire says, and no vendor's route without its registration.
@Suite struct IngestionWireTests {
    /// A made-up vendor's wire: `POST /echo/{word}` answers the word; refusals in its own shape.
    struct EchoWire: IngestionWire {
        var routes: [WireRoute] {
            [
                WireRoute(
                    PathPattern("/echo/{word}/", optionalTrailingSlash: true) { _, word in word != "no" },
                    methods: ["POST"], screening: .json)
            ]
        }

        func answer(
            _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
        ) -> HTTPResponse? {
            .json(200, ["word": .string(String(parameters["word"] ?? ""))])
        }

        func refusal(_ status: Int, tag: String, _ description: String) -> HTTPResponse? {
            .json(status, ["echo_error": .string(tag)])
        }
    }

    /// A wire that counts how often its routes are read (they are built on every read, like a computed property).
    final class CountingWire: IngestionWire {
        let reads = Mutex(0)

        var routes: [WireRoute] {
            reads.withLock { $0 += 1 }
            return [WireRoute(PathPattern("/count"), methods: ["POST"], screening: .json)]
        }

        func answer(
            _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
        ) -> HTTPResponse? { .json(200, ["counted": 1]) }
    }

    static let port: UInt16 = 4000

    static func router(_ wires: [any IngestionWire]) throws -> Router {
        var configuration = CollectorConfiguration()
        configuration.adminToken = "wire-secret"
        configuration.tokens = ["wire-token"]
        let store = try CollectorStore(directory: nil)
        return Router(
            ingestion: Ingestion(store: store, configuration: configuration), store: store,
            debugFiles: try DebugFileStore(directory: nil), faults: FaultInjector(), configuration: configuration,
            rateLimiter: nil, wires: wires)
    }

    static func send(_ router: Router, _ method: String, _ path: String, type: String) -> HTTPResponse? {
        router.answer(
            HTTPRequest(
                method: method, path: path, headers: ["host": "127.0.0.1:\(port)", "content-type": type],
                body: Array("{}".utf8)), port: port)
    }

    static func field(_ response: HTTPResponse?, _ key: String) -> String? {
        JSONValue(bytes: response?.body ?? [])?[key]?.stringValue
    }

    @Test func patternsMatchWholeSegmentsAndTakeParameters() {
        let envelope = PathPattern("/api/{id}/envelope/", optionalTrailingSlash: true) { _, id in
            id.allSatisfy(\.isNumber)
        }
        #expect(envelope.match("/api/42/envelope/")?["id"] == "42")
        #expect(envelope.match("/api/42/envelope")?["id"] == "42")
        #expect(envelope.match("/api/x/envelope/") == nil)
        #expect(envelope.match("/api//envelope/") == nil)
        #expect(envelope.match("/api/42/envelope//") == nil)
        #expect(envelope.match("/api/42/store/") == nil)
        let strict = PathPattern("/api/0/organizations/{org}/chunk-upload/")
        #expect(strict.match("/api/0/organizations/acme/chunk-upload/")?["org"] == "acme")
        #expect(strict.match("/api/0/organizations/acme/chunk-upload") == nil)
        #expect(strict.match("/api/0/organizations/acme/extra/chunk-upload/") == nil)
    }

    @Test func aRegisteredWireIsScreenedAndAnsweredAsItSays() throws {
        let router = try Self.router([EchoWire()])
        let answer = Self.send(router, "POST", "/echo/hello", type: "application/json")
        #expect(answer?.status == 200)
        #expect(Self.field(answer, "word") == "hello")
        let refused = Self.send(router, "POST", "/echo/hello/", type: "text/plain")
        #expect(refused?.status == 415)
        #expect(Self.field(refused, "echo_error") == "unsupported_content_type")
        // A parameter the route does not take, or a method it does not answer: the collector's own 404.
        #expect(Self.send(router, "POST", "/echo/no", type: "application/json")?.status == 404)
        #expect(Self.send(router, "GET", "/echo/hello", type: "application/json")?.status == 404)
    }

    @Test func aVendorsRoutesExistOnlyWhenItsWiresAreRegistered() throws {
        let all = try Self.router(CollectorWires.all)
        let none = try Self.router([])
        // Sentry's envelope route, registered: screened as Sentry's (its media type, its error body, no secret).
        let envelope = Self.send(all, "POST", "/api/1/envelope/", type: "application/json")
        #expect(envelope?.status == 415)
        #expect(Self.field(envelope, "detail") == "Content-Type must be application/x-sentry-envelope")
        // Unregistered: an `/api/*` path like any other, the admin secret asked for.
        #expect(Self.send(none, "POST", "/api/1/envelope/", type: "application/x-sentry-envelope")?.status == 401)
        // PostHog's capture V1: its own refusal (PostHog's tag) when registered, no route when not.
        let capture = Self.send(all, "POST", "/i/v1/analytics/events", type: "text/plain")
        #expect(capture?.status == 415)
        #expect(Self.field(capture, "error") == "unsupported_content_type")
        #expect(Self.send(none, "POST", "/i/v1/analytics/events", type: "application/json")?.status == 404)
        #expect(Self.send(none, "POST", "/flags", type: "application/json")?.status == 404)
    }

    @Test func aWiresRoutesAreReadOnceWhenTheRouterIsMadeNotPerRequest() throws {
        let wire = CountingWire()
        let router = try Self.router([wire])
        for _ in 0..<5 {
            #expect(Self.send(router, "POST", "/count", type: "application/json")?.status == 200)
            #expect(Self.send(router, "POST", "/other", type: "application/json")?.status == 404)
        }
        #expect(wire.reads.withLock { $0 } == 1)
    }
}
