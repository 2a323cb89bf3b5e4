import CohorlyCollectorCore

/// PostHog's wires on the collector (docs/posthog.md): capture V1, the legacy capture wire and the flags request.
package enum PostHogWires {
    package static let all: [any IngestionWire] = [
        PostHogCaptureWire<CaptureV1Ingestion>(
            routes: [WireRoute(PathPattern(CaptureV1Ingestion.path), screening: .json)]),
        PostHogCaptureWire<PostHogLegacyIngestion>(
            routes: PostHogLegacyIngestion.routes.map {
                WireRoute(PathPattern($0, optionalTrailingSlash: true), screening: .json)
            }),
        PostHogFlagsWire(),
    ]
}

/// A capture wire in PostHog's shape — `POST /i/v1/analytics/events` (CaptureV1Ingestion.swift) and the legacy
/// `POST /batch`, `/e`, `/capture` (PostHogLegacyIngestion.swift): its ingestion made per request with the
/// collector's store, configuration and parse budget, answered inside the injected faults, refused in its own body.
protocol PostHogCaptureIngestion: Sendable {
    init(store: CollectorStore, configuration: CollectorConfiguration, budget: ParseBudget)
    func handle(_ request: HTTPRequest) -> HTTPResponse
    static func error(_ status: Int, _ tag: String, _ description: String) -> HTTPResponse
}

extension CaptureV1Ingestion: PostHogCaptureIngestion {}
extension PostHogLegacyIngestion: PostHogCaptureIngestion {}

/// The wire of one ``PostHogCaptureIngestion`` at `routes`.
struct PostHogCaptureWire<Ingestion: PostHogCaptureIngestion>: IngestionWire {
    let routes: [WireRoute]

    func answer(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) -> HTTPResponse? {
        collector.withFaults(request) {
            Ingestion(
                store: collector.store, configuration: collector.configuration, budget: collector.ingestion.budget
            ).handle(request)
        }
    }

    func refusal(_ status: Int, tag: String, _ description: String) -> HTTPResponse? {
        Ingestion.error(status, tag, description)
    }
}

/// `POST /flags` (FlagRoutes+PostHog.swift): the collector's flags in PostHog's shape.
struct PostHogFlagsWire: IngestionWire {
    let routes = [WireRoute(PathPattern("/flags"), methods: ["POST"], screening: .json)]

    func answer(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) throws -> HTTPResponse? {
        try collector.postHogFlags(request)
    }
}
