import CohorlyCollectorCore

/// PostHog's wires on the collector (docs/posthog.md): capture V1, the legacy capture wire and the flags request.
package enum PostHogWires {
    package static let all: [any IngestionWire] = [CaptureV1Wire(), PostHogLegacyWire(), PostHogFlagsWire()]
}

/// `POST /i/v1/analytics/events` (CaptureV1Ingestion.swift), injected faults around it.
struct CaptureV1Wire: IngestionWire {
    let routes = [WireRoute(PathPattern(CaptureV1Ingestion.path), screening: .json)]

    func answer(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) -> HTTPResponse? {
        collector.withFaults(request) {
            CaptureV1Ingestion(
                store: collector.store, configuration: collector.configuration, budget: collector.ingestion.budget
            ).handle(request)
        }
    }

    func refusal(_ status: Int, tag: String, _ description: String) -> HTTPResponse? {
        CaptureV1Ingestion.error(status, tag, description)
    }
}

/// `POST /batch`, `/e`, `/capture` (PostHogLegacyIngestion.swift), injected faults around them.
struct PostHogLegacyWire: IngestionWire {
    let routes = PostHogLegacyIngestion.routes.map {
        WireRoute(PathPattern($0, optionalTrailingSlash: true), screening: .json)
    }

    func answer(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) -> HTTPResponse? {
        collector.withFaults(request) {
            PostHogLegacyIngestion(
                store: collector.store, configuration: collector.configuration, budget: collector.ingestion.budget
            ).handle(request)
        }
    }

    func refusal(_ status: Int, tag: String, _ description: String) -> HTTPResponse? {
        PostHogLegacyIngestion.error(status, tag, description)
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
