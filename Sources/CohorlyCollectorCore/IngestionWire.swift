/// The seam between the collector and a vendor's ingestion wire (a Sentry envelope, PostHog's capture V1, …): the
/// routes the wire answers, how its requests are screened and authenticated, and the answer to one request —
/// decoded into the collector's own records (events as `CollectorStore.NewEvent`: the crash as
/// `CapturedException` plus the event's identity and properties; release-health sessions; debug files) and
/// stored through the collector it is handed. The collector names no vendor: `Router` asks the wires it was given
/// (the registration list is `CollectorWires.all`, module CohorlyCollector) before its own routes.
package protocol IngestionWire: Sendable {
    /// The routes it answers, tried in order (the first whose path matches); `Router` reads them once, when it is
    /// made.
    var routes: [WireRoute] { get }

    /// The answer to `request` on `route` (its path parameters in `parameters`), nil to drop the connection
    /// without one. `collector` is the router whose storage, configuration, faults and rate limit it uses.
    func answer(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) throws -> HTTPResponse?

    /// Claims a request's body before it arrives (a streamed upload), nil to receive it whole as usual.
    func bodySink(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) -> (any RequestBodySink)?

    /// The wire's own shape of a refusal made before routing (`status`, the vendor's error tag, a description),
    /// nil for the collector's `{"error": …}`.
    func refusal(_ status: Int, tag: String, _ description: String) -> HTTPResponse?
}

extension IngestionWire {
    package func bodySink(
        _ request: HTTPRequest, route: WireRoute, parameters: [String: Substring], collector: Router
    ) -> (any RequestBodySink)? { nil }

    package func refusal(_ status: Int, tag: String, _ description: String) -> HTTPResponse? { nil }
}

/// One route of a wire: its methods, its path pattern and how its requests are screened (Router+Policy.swift).
package struct WireRoute: Sendable {
    /// How a request on the route is screened and authenticated before it is routed.
    package enum Screening: Sendable, Equatable {
        /// The wire authenticates the request itself (a project key in its headers or body); a `POST` must say
        /// `Content-Type: application/json`, so a web page cannot send one cross-site unasked.
        case json
        /// As `json`, with this media type instead; an `Origin` header, when sent, must be this server's.
        case mediaType(String)
        /// Like every `/api/*` route: an `Origin` of this server and the collector's admin secret.
        case collectorSecret
    }

    /// The methods the route answers; nil for any (the wire answers 405 itself).
    package let methods: Set<String>?
    package let path: PathPattern
    package let screening: Screening

    package init(_ path: PathPattern, methods: Set<String>? = nil, screening: Screening) {
        self.methods = methods
        self.path = path
        self.screening = screening
    }

    /// Whether `method` is one the route answers.
    package func answers(_ method: String) -> Bool { methods.map { $0.contains(method) } ?? true }
}

/// A path of `/`-separated segments where `{name}` stands for one non-empty segment (its value passed to the wire
/// under `name`), e.g. `/api/{project_id}/envelope/`.
package struct PathPattern: Sendable, CustomStringConvertible {
    private enum Segment: Sendable {
        case literal(String)
        case parameter(String)
    }

    private let segments: [Segment]
    /// Whether the path may also come without its final `/`.
    private let optionalTrailingSlash: Bool
    /// Whether a parameter's value is one the route takes (for example digits only).
    private let accepts: @Sendable (_ name: String, _ value: Substring) -> Bool
    package let description: String

    package init(
        _ pattern: String, optionalTrailingSlash: Bool = false,
        accepts: @escaping @Sendable (_ name: String, _ value: Substring) -> Bool = { _, _ in true }
    ) {
        description = pattern
        segments = pattern.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count > 2
                ? .parameter(String(segment.dropFirst().dropLast())) : .literal(String(segment))
        }
        self.optionalTrailingSlash = optionalTrailingSlash && pattern.hasSuffix("/")
        self.accepts = accepts
    }

    /// The parameters of `path` when it matches, else nil.
    package func match(_ path: String) -> [String: Substring]? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let count = parts.count == segments.count - 1 && optionalTrailingSlash ? parts.count : segments.count
        guard parts.count == count else { return nil }
        var parameters: [String: Substring] = [:]
        for (part, segment) in zip(parts, segments) {
            switch segment {
            case .literal(let text): guard part == text else { return nil }
            case .parameter(let name):
                guard !part.isEmpty, accepts(name, part) else { return nil }
                parameters[name] = part
            }
        }
        return parameters
    }
}

extension Router {
    /// The wire route `path` belongs to (whatever the method), with its wire and parameters.
    func wireRoute(_ path: String) -> (wire: any IngestionWire, route: WireRoute, parameters: [String: Substring])? {
        for (wire, route) in wireRoutes {
            if let parameters = route.path.match(path) { return (wire, route, parameters) }
        }
        return nil
    }

    /// The answer of the wire whose route takes `request`, nil when none does (`.none`) or when the wire drops the
    /// connection (`.some(nil)`).
    func wireAnswer(_ request: HTTPRequest) throws -> HTTPResponse?? {
        guard let (wire, route, parameters) = wireRoute(request.path), route.answers(request.method) else {
            return .none
        }
        return .some(try wire.answer(request, route: route, parameters: parameters, collector: self))
    }

    /// The body sink of the wire whose route takes `request`, if it streams.
    func wireBodySink(_ request: HTTPRequest) -> (any RequestBodySink)? {
        guard let (wire, route, parameters) = wireRoute(request.path), route.answers(request.method) else {
            return nil
        }
        return wire.bodySink(request, route: route, parameters: parameters, collector: self)
    }
}
