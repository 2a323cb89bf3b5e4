import Foundation

/// The Cohorly API's flags wire (cohorly-api.md §5): `POST /flags/evaluate` with `{"distinct_id", "flag_keys"?}`
/// and the token in `X-Cohorly-Token`, answered `{"flags":{"<key>":{"enabled","variant","payload","reason"}}}`.
/// One attempt per evaluation: a failed one keeps what the client serves until the next trigger.
extension CohorlyDestination: FlagsDestination {
    func evaluateFlags(_ request: FlagsRequest, transport: any Transport, options: CohorlyOptions) -> FlagsAnswer {
        var body: Properties = ["distinct_id": .string(request.distinctId)]
        if let keys = request.keys { body["flag_keys"] = .array(keys.map { .string($0) }) }
        var headers = [("Content-Type", "application/json")]
        if let token { headers.append(("X-Cohorly-Token", token)) }
        let response = transport.send(
            TransportRequest(
                url: apiHost.appendingPathComponent("flags/evaluate"), headers: headers,
                body: Array(CohorlyValue.object(body).jsonString.utf8), timeout: options.retry.requestTimeout,
                connectTimeout: options.retry.connectTimeout))
        switch response {
        case .failure(let reason):
            return .failure("POST /flags/evaluate: \(reason)")
        case .http(let status, _, _) where !(200..<300).contains(status):
            return .failure("POST /flags/evaluate: HTTP \(status)")
        case .http(_, _, let bytes):
            return Self.parseFlags(bytes)
        }
    }

    /// The answer's flags, or why it is malformed.
    static func parseFlags(_ bytes: [UInt8]) -> FlagsAnswer {
        guard let text = String(validating: bytes, as: UTF8.self), let answer = CohorlyValue(json: text),
            let flags = answer.objectValue?["flags"]?.objectValue
        else { return .failure("POST /flags/evaluate: malformed answer (no \"flags\" object)") }
        var result: [String: EvaluatedFlag] = [:]
        for (key, value) in flags {
            guard let flag = value.objectValue, case .bool(let enabled) = flag["enabled"] else {
                return .failure("POST /flags/evaluate: malformed answer (flag \"\(key)\" has no boolean \"enabled\")")
            }
            let variant: String?
            switch flag["variant"] {
            case .string(let name): variant = name
            case .null, nil: variant = nil
            default:
                return .failure("POST /flags/evaluate: malformed answer (flag \"\(key)\" has a non-string variant)")
            }
            var payload = flag["payload"]
            if payload == .some(.null) { payload = nil }
            result[key] = EvaluatedFlag(enabled: enabled, variant: variant, payload: payload)
        }
        return .flags(result)
    }
}
