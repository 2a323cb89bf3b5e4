import CohorlyClient
import Foundation

/// PostHog's flags wire (posthog.md part D): `POST {host}/flags?v=2` without an `Authorization` header, the body
/// `{token, distinct_id, groups:{}, group_properties:{}, person_properties:{$device_id}, geoip_disable,
/// flag_keys_to_evaluate?}`; the v2 answer (`flags` with `metadata`) and the legacy one (`featureFlags`,
/// `featureFlagPayloads`) both parsed; one retry on 502, 504 and timeouts. A `quotaLimited` answer naming
/// `feature_flags` is a failure (the cache keeps serving); `errorsWhileComputingFlags` merges the answer into
/// what is served instead of replacing it.
extension PostHogDestination: FlagsDestination {
    func evaluateFlags(_ request: FlagsRequest, transport: any Transport, options: CohorlyOptions) -> FlagsAnswer {
        var person = request.personProperties
        person["$device_id"] = person["$device_id"] ?? .string(request.anonymousId)
        var body: Properties = [
            "token": .string(configuration.apiKey), "distinct_id": .string(request.distinctId),
            "groups": .object(request.groups), "group_properties": .object(request.groupProperties),
            "person_properties": .object(person),
            "geoip_disable": .bool(request.disableGeoIP ?? configuration.disableGeoIP),
        ]
        if let keys = request.keys { body["flag_keys_to_evaluate"] = .array(keys.map { .string($0) }) }
        var components = URLComponents(
            url: configuration.host.appendingPathComponent("flags"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "v", value: "2")]
        guard let url = components?.url else { return .failure("POST /flags: invalid host") }
        let exchange = TransportRequest(
            url: url, headers: [("Content-Type", "application/json"), ("User-Agent", sdkInfo)],
            body: Array(CohorlyValue.object(body).jsonString.utf8), timeout: options.retry.requestTimeout,
            connectTimeout: options.retry.connectTimeout)
        var response = transport.send(exchange)
        if Self.retriesFlags(response) { response = transport.send(exchange) }
        switch response {
        case .failure(let reason): return .failure("POST /flags: \(reason)")
        case .http(let status, _, _) where !(200..<300).contains(status): return .failure("POST /flags: HTTP \(status)")
        case .http(_, _, let bytes): return Self.parseFlags(bytes)
        }
    }

    /// 502, 504 and timeouts get the one retry PostHog's SDKs give a flags request.
    static func retriesFlags(_ response: TransportResponse) -> Bool {
        switch response {
        case .http(let status, _, _): return status == 502 || status == 504
        case .failure(let reason): return reason.localizedCaseInsensitiveContains("timeout")
        }
    }

    /// The flags of a v2 or legacy answer, or why it is malformed or refused.
    static func parseFlags(_ bytes: [UInt8]) -> FlagsAnswer {
        guard let text = String(validating: bytes, as: UTF8.self), let answer = CohorlyValue(json: text)?.objectValue
        else { return .failure("POST /flags: malformed answer (not a JSON object)") }
        if answer["quotaLimited"]?.arrayValue?.contains("feature_flags") == true {
            return .failure("POST /flags: quota limited (feature_flags)")
        }
        let partial = answer["errorsWhileComputingFlags"] == .bool(true)
        var result: [String: EvaluatedFlag] = [:]
        if let flags = answer["flags"]?.objectValue {
            var common: Properties = [:]
            if let id = answer["requestId"], id != .null { common["$feature_flag_request_id"] = id }
            if let at = answer["evaluatedAt"], at != .null { common["$feature_flag_evaluated_at"] = at }
            for (key, value) in flags {
                guard let flag = value.objectValue, case .bool(let enabled) = flag["enabled"] else {
                    return .failure("POST /flags: malformed answer (flag \"\(key)\" has no boolean \"enabled\")")
                }
                var exposure = common
                if let reason = flag["reason"]?["description"], reason != .null {
                    exposure["$feature_flag_reason"] = reason
                }
                let metadata = flag["metadata"]
                if let id = metadata?["id"], id != .null { exposure["$feature_flag_id"] = id }
                if let version = metadata?["version"], version != .null { exposure["$feature_flag_version"] = version }
                result[key] = EvaluatedFlag(
                    enabled: enabled, variant: flag["variant"]?.stringValue, payload: payload(metadata?["payload"]),
                    exposureProperties: exposure)
            }
        } else if let legacy = answer["featureFlags"]?.objectValue {
            let payloads = answer["featureFlagPayloads"]?.objectValue ?? [:]
            for (key, value) in legacy {
                switch value {
                case .bool(let enabled):
                    result[key] = EvaluatedFlag(enabled: enabled, variant: nil, payload: payload(payloads[key]))
                case .string(let variant):
                    result[key] = EvaluatedFlag(enabled: true, variant: variant, payload: payload(payloads[key]))
                default:
                    return .failure(
                        "POST /flags: malformed answer (featureFlags \"\(key)\" is not a boolean or string)")
                }
            }
        } else {
            return .failure("POST /flags: malformed answer (neither \"flags\" nor \"featureFlags\")")
        }
        return partial ? .partial(result) : .flags(result)
    }

    /// A payload as PostHog sends it: JSON text (parsed; kept as a string when it is not JSON) or a value.
    private static func payload(_ value: CohorlyValue?) -> CohorlyValue? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return CohorlyValue(json: text) ?? .string(text)
        case let other?: return other
        }
    }
}
