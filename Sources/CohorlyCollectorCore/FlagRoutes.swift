import Foundation

// The feature flag endpoints (cohorly-api.md §5):
//
//   POST /flags?v=2                 PostHog's flags request (a wire: module CohorlyPostHogIngestion)
//   POST /flags/evaluate            {"distinct_id":ID, "flag_keys"?:[K…]} + project token (X-Cohorly-Token or
//                                   body "token") -> {"flags":{K:{enabled, variant, payload, reason}}}
//   GET  /flags/local-evaluation    Authorization: Bearer <flag secret> -> {"flags":[definition…]}
//   GET  /api/flags                 the definitions (admin: `cohorly flags list`)
//   GET|PUT|DELETE /api/flags/<key> one definition (admin: `cohorly flags show|set|delete`)
//
// Every request passes `Router.screen` first (Host, Origin, the admin secret on /api/*, JSON content type on
// POST). The flag secret is the collector's `flagSecret`, else its admin secret; with neither, the route is open
// like the rest of a collector without a secret.

extension Router {
    /// The answer for a flags route, nil when `request` is not one.
    func flags(_ request: HTTPRequest) throws -> HTTPResponse? {
        switch (request.method, request.path) {
        case ("POST", "/flags/evaluate"): return try evaluateFlags(request)
        case ("GET", "/flags/local-evaluation"): return try localEvaluation(request)
        case ("GET", "/api/flags"): return .json(200, ["flags": .array(try store.flags().map(\.json))])
        case (_, "/flags/evaluate"), (_, "/flags/local-evaluation"), (_, "/api/flags"):
            return .error(405, "\(request.method) is not allowed on \(request.path)")
        default: break
        }
        guard request.path.hasPrefix("/api/flags/") else { return nil }
        let key = String(request.path.dropFirst("/api/flags/".count)).removingPercentEncoding ?? ""
        switch request.method {
        case "GET":
            guard let flag = try store.flag(key) else { return .error(404, "no flag \(key)") }
            return .json(200, flag.json)
        case "PUT":
            guard let json = JSONValue(bytes: request.body) else { return .error(400, "expected a flag definition") }
            do {
                let definition = try FlagDefinition(json: json)
                guard definition.key == key else {
                    return .error(400, "the definition's key \(definition.key) is not the path's \(key)")
                }
                let replaced = try store.setFlag(definition, now: Int64(Date().timeIntervalSince1970 * 1000))
                return .json(replaced ? 200 : 201, definition.json)
            } catch let error as FlagDefinitionError {
                return .error(400, error.description)
            }
        case "DELETE":
            guard try store.deleteFlag(key) else { return .error(404, "no flag \(key)") }
            return .json(200, ["status": 1])
        default:
            return .error(405, "\(request.method) is not allowed on /api/flags/<key>")
        }
    }

    private func evaluateFlags(_ request: HTTPRequest) throws -> HTTPResponse {
        let usage = #"expected {"distinct_id":"ID","flag_keys":["KEY"]} (flag_keys optional)"#
        guard let json = JSONValue(bytes: request.body), json.objectValue != nil else { return .error(400, usage) }
        guard let token = request.header("X-Cohorly-Token") ?? json["token"]?.stringValue,
            configuration.accepts(token: token)
        else { return .error(401, "invalid token") }
        guard let distinctId = json["distinct_id"]?.stringValue, !distinctId.isEmpty else {
            return .error(400, "distinct_id must be a non-empty string; " + usage)
        }
        switch try evaluatedFlags(json, keysField: "flag_keys", distinctId: distinctId) {
        case .refused(let answer): return answer
        case .evaluated(let results): return .json(200, ["flags": .object(results)])
        }
    }

    /// What `evaluatedFlags` gives: every asked flag's evaluation by key, or the answer refusing the request.
    package enum FlagEvaluation {
        case evaluated([String: JSONValue])
        case refused(HTTPResponse)
    }

    /// The stored flags named by the body's `keysField` (or alias; all flags when absent) evaluated for
    /// `distinctId` — shared by Cohorly's `/flags/evaluate` and PostHog's `/flags`.
    package func evaluatedFlags(_ json: JSONValue, keysField: String, alias: String? = nil, distinctId: String) throws
        -> FlagEvaluation
    {
        var keys: Set<String>?
        if let list = json[keysField] ?? alias.flatMap({ json[$0] }) {
            guard let array = list.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
                return .refused(.error(400, "\(keysField) must be an array of strings"))
            }
            keys = Set(array.compactMap(\.stringValue))
        }
        var results: [String: JSONValue] = [:]
        for flag in try store.flags() where keys?.contains(flag.key) ?? true {
            guard let result = flag.evaluate(distinctId) else {
                return .refused(.error(500, "cannot evaluate flags: libcrypto (SHA-1) is unavailable"))
            }
            results[flag.key] = result
        }
        return .evaluated(results)
    }

    private func localEvaluation(_ request: HTTPRequest) throws -> HTTPResponse {
        if let secret = configuration.flagSecret ?? configuration.adminToken,
            !Self.credentialMatches(request.header("Authorization"), secret)
        {
            return .error(
                401, "missing or wrong flag secret (Authorization: Bearer <secret>)",
                headers: [("WWW-Authenticate", "Bearer")])
        }
        return .json(200, ["flags": .array(try store.flags().map(\.json))])
    }
}
