import CohorlyCollectorCore

/// Sentry's wires on the collector (docs/sentry.md "Local collector"): the envelope endpoint and the debug-file
/// chunk upload.
package enum SentryWires {
    package static let all: [any IngestionWire] = [SentryEnvelopeWire(), SentryChunkUploadWire()]
}

/// `POST /api/{project_id}/envelope/` (SentryIngestion.swift): its own media type, its key instead of the admin
/// secret.
struct SentryEnvelopeWire: IngestionWire {
    /// The route, its project id 1 to 20 ASCII digits, the trailing slash optional.
    static let route = WireRoute(
        PathPattern("/api/{project_id}/envelope/", optionalTrailingSlash: true) { _, id in
            id.count <= 20 && id.allSatisfy { $0.isASCII && $0.isNumber }
        }, screening: .mediaType(SentryIngestion.contentType))

    let routes = [Self.route]

    func answer(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) -> HTTPResponse? {
        SentryIngestion(
            store: collector.store, configuration: collector.configuration, faults: collector.faults,
            rateLimiter: collector.rateLimiter, budget: collector.ingestion.budget
        ).handle(request, projectId: String(parameters["project_id"] ?? ""))
    }

    func refusal(_ status: Int, tag: String, _ description: String) -> HTTPResponse? {
        SentryIngestion.error(status, description)
    }
}

/// Sentry's debug-file chunk upload under the admin secret (SentryChunkRoutes.swift): the chunks stream to disk.
struct SentryChunkUploadWire: IngestionWire {
    let routes = [
        WireRoute(SentryChunkRoutes.chunkUpload, screening: .collectorSecret),
        WireRoute(SentryChunkRoutes.assemble, screening: .collectorSecret),
    ]

    func answer(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) -> HTTPResponse? {
        collector.sentryChunkRoute(request)
    }

    func bodySink(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) -> (any RequestBodySink)? {
        collector.sentryChunkSink(request)
    }
}
