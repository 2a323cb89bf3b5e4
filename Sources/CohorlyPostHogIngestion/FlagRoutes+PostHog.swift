import CohorlyCollectorCore
import Foundation

// PostHog's flags wire on the collector (docs/collector.md "Feature flags in the collector"), so the PostHog
// destination's flags run end
// to end on one machine like its capture V1:
//
//   POST /flags?v=2   {"token"|"api_key"|"$token", "distinct_id", "flag_keys_to_evaluate"|"flag_keys"?, …}
//                     -> {"flags":{K:{key, enabled, variant, reason:{code, description}, metadata:{payload}}},
//                         "errorsWhileComputingFlags":false, "requestId"}
//
// The flags are the collector's own definitions evaluated by the same rule as `/flags/evaluate`; the payload goes
// out as JSON text, as PostHog sends it. No `Authorization`: the project token in the body is the credential.

extension Router {
    /// The answer to PostHog's `POST /flags`.
    func postHogFlags(_ request: HTTPRequest) throws -> HTTPResponse {
        let usage = #"expected {"token":"…","distinct_id":"ID","flag_keys_to_evaluate":["KEY"]} (keys optional)"#
        guard let json = JSONValue(bytes: request.body), json.objectValue != nil else { return .error(400, usage) }
        let token = ["token", "api_key", "$token"].lazy.compactMap { json[$0]?.stringValue }.first
        guard let token, configuration.accepts(token: token) else { return .error(401, "invalid token") }
        guard let distinctId = json["distinct_id"]?.stringValue, !distinctId.isEmpty else {
            return .error(400, "distinct_id must be a non-empty string; " + usage)
        }
        let results: [String: JSONValue]
        switch try evaluatedFlags(json, keysField: "flag_keys_to_evaluate", alias: "flag_keys", distinctId: distinctId)
        {
        case .refused(let answer): return answer
        case .evaluated(let evaluated): results = evaluated
        }
        var flags: [String: JSONValue] = [:]
        for (key, result) in results {
            let reason = result["reason"]?.stringValue ?? ""
            var metadata: [String: JSONValue] = ["payload": .null]
            if let payload = result["payload"], payload != .null { metadata["payload"] = .string(payload.jsonString) }
            flags[key] = [
                "key": .string(key), "enabled": result["enabled"] ?? false, "variant": result["variant"] ?? .null,
                "reason": ["code": .string(reason), "description": .string(reason)], "metadata": .object(metadata),
            ]
        }
        return .json(
            200,
            [
                "flags": .object(flags), "errorsWhileComputingFlags": false,
                "requestId": .string(UUID().uuidString.lowercased()),
            ])
    }
}
