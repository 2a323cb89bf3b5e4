import Cohorly
import CohorlyCollector
import Foundation
import Testing

/// The collector's flags: bucketing against a reference computed here (its own SHA-1), the routes, the admin
/// CLI and the client's wire against the collector.
@Suite(.serialized) struct FlagEvaluationTests {
    /// SHA-1 (FIPS 180-4) written out for the reference, independent of the libcrypto the collector uses.
    static func sha1(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = message + [0x80]
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) * 8
        for shift in stride(from: 56, through: 0, by: -8) {
            padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            var w = [UInt32](repeating: 0, count: 80)
            for i in 0..<16 {
                w[i] = (0..<4).reduce(0) { $0 << 8 | UInt32(padded[chunk + 4 * i + $1]) }
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32) =
                    switch i {
                    case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                    case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                    case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                    default: (b ^ c ^ d, 0xCA62_C1D6)
                    }
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h = [h[0] &+ a, h[1] &+ b, h[2] &+ c, h[3] &+ d, h[4] &+ e]
        }
        return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32($0))) } }
    }

    /// The reference bucket: the hex text's first 15 digits parsed as a number, ÷ 2^60 (as the SDKs write it).
    static func unit(_ input: String) -> Double {
        let hex = sha1(Array(input.utf8)).map { String(format: "%02x", $0) }.joined()
        return Double(UInt64(hex.prefix(15), radix: 16) ?? 0) / pow(2, 60)
    }

    @Test func sha1ReferenceIsSHA1() {
        let hex = { (text: String) in Self.sha1(Array(text.utf8)).map { String(format: "%02x", $0) }.joined() }
        #expect(hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test func bucketingOverTenThousandIdsMatchesTheReference() throws {
        let flag = FlagDefinition(
            key: "checkout-copy",
            variants: [
                .init(key: "control", rolloutPct: 50, payload: nil),
                .init(key: "test", rolloutPct: 30, payload: ["a": 1]),
                .init(key: "third", rolloutPct: 20, payload: nil),
            ],
            rules: [
                .init(distinctIds: ["vip-1", "vip-2"], rolloutPct: 100, variant: "test"),
                .init(distinctIds: nil, rolloutPct: 30, variant: nil),
            ])
        #expect(flag.problem == nil)
        var enabled = 0
        var variantCounts: [String: Int] = [:]
        var mismatches: [String] = []
        for index in 0..<10_000 {
            let id = index % 997 == 0 ? "user-é-\(index)" : "user-\(index)"
            let bucket = Self.unit("checkout-copy.\(id)")
            if FlagHash.unit("checkout-copy.\(id)") != bucket { mismatches.append("bucket \(id)") }
            // The reference evaluation.
            var expected: (enabled: Bool, variant: String?, reason: String) = (false, nil, "no_match")
            if bucket < 0.30 {
                let hash = Self.unit("checkout-copy.\(id)variant")
                let variant = hash < 0.5 ? "control" : hash < 0.8 ? "test" : "third"
                expected = (true, variant, "rule:1")
            }
            let result = flag.evaluate(id)
            let payload: CohorlyValue = expected.variant == "test" ? ["a": 1] : .null
            if result?["enabled"] != .bool(expected.enabled) || result?["variant"]?.stringValue != expected.variant
                || result?["reason"]?.stringValue != expected.reason || result?["payload"] != payload
            {
                mismatches.append(id)
            }
            if expected.enabled {
                enabled += 1
                variantCounts[expected.variant ?? "", default: 0] += 1
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        // The shares come out as configured (binomial, far inside 5 standard deviations).
        #expect(abs(enabled - 3000) < 230)
        #expect(abs((variantCounts["control"] ?? 0) - 1500) < 200)
        // The id list comes first and pins its variant.
        #expect(flag.evaluate("vip-1")?["variant"] == "test" && flag.evaluate("vip-1")?["reason"] == "rule:0")
        var inactive = flag
        inactive.active = false
        #expect(inactive.evaluate("vip-1")?["reason"] == "inactive" && inactive.evaluate("vip-1")?["enabled"] == false)
    }

    @Test func definitionsAreValidated() {
        #expect(FlagDefinition(key: "").problem != nil)
        #expect(FlagDefinition(key: "a/b").problem != nil)
        #expect(
            FlagDefinition(
                key: "k",
                variants: [
                    .init(key: "a", rolloutPct: 60, payload: nil), .init(key: "b", rolloutPct: 30, payload: nil),
                ]
            )
            .problem?.contains("add up to 90") == true)
        #expect(
            FlagDefinition(key: "k", rules: [.init(distinctIds: nil, rolloutPct: 101, variant: nil)]).problem != nil)
        #expect(FlagDefinition(key: "k", rules: [.init(distinctIds: nil, rolloutPct: 10, variant: "x")]).problem != nil)
    }

    @Test func routesStoreEvaluateAndGuard() throws {
        let collector = try startCollector {
            $0.adminToken = "admin-secret"; $0.flagSecret = "flag-secret"
        }
        defer { collector.stop() }
        let admin = [("Content-Type", "application/json"), ("Authorization", "Bearer admin-secret")]
        let definition = #"{"key":"beta","rules":[{"rolloutPct":100}],"payload":{"limit":3}}"#
        #expect(
            send(collector, "PUT", "/api/flags/beta", body: definition, headers: [("Content-Type", "application/json")])
                .status == 401)
        #expect(send(collector, "PUT", "/api/flags/beta", body: definition, headers: admin).status == 201)
        #expect(send(collector, "PUT", "/api/flags/beta", body: definition, headers: admin).status == 200)
        #expect(send(collector, "PUT", "/api/flags/other", body: definition, headers: admin).status == 400)
        #expect(
            send(
                collector, "PUT", "/api/flags/bad", body: #"{"key":"bad","variants":[{"key":"a","rolloutPct":5}]}"#,
                headers: admin
            ).text.contains("add up to 5"))

        let evaluated = send(collector, "/flags/evaluate", body: #"{"distinct_id":"u1"}"#)
        #expect(evaluated.status == 200)
        #expect(
            evaluated.body?["flags"]?["beta"] == [
                "enabled": true, "variant": nil, "payload": ["limit": 3], "reason": "rule:0",
            ])
        // Token in the body; a filter; bad input.
        let filtered = send(
            collector, "/flags/evaluate", body: #"{"distinct_id":"u1","token":"t2","flag_keys":["nope"]}"#,
            headers: [("Content-Type", "application/json")])
        #expect(filtered.status == 200 && filtered.body?["flags"] == [:])
        #expect(
            send(
                collector, "/flags/evaluate", body: #"{"distinct_id":"u1"}"#,
                headers: [("Content-Type", "application/json")]
            ).status == 401)
        #expect(send(collector, "/flags/evaluate", body: #"{"distinct_id":""}"#).status == 400)
        #expect(send(collector, "/flags/evaluate", body: #"{"distinct_id":"u","flag_keys":[1]}"#).status == 400)
        #expect(send(collector, "/flags/evaluate", body: "[").status == 400)
        #expect(
            send(
                collector, "/flags/evaluate", body: #"{"distinct_id":"u"}"#,
                headers: [("Content-Type", "text/plain"), ("X-Cohorly-Token", "t1")]
            ).status == 415)

        // Local evaluation needs the flag secret.
        #expect(send(collector, "GET", "/flags/local-evaluation").status == 401)
        #expect(
            send(collector, "GET", "/flags/local-evaluation", headers: [("Authorization", "Bearer admin-secret")])
                .status == 401)
        let local = send(
            collector, "GET", "/flags/local-evaluation", headers: [("Authorization", "Bearer flag-secret")])
        #expect(local.status == 200)
        #expect(local.body?["flags"]?.arrayValue?.first?["localEvaluable"] == true)

        #expect(send(collector, "DELETE", "/api/flags/beta", headers: admin).status == 200)
        #expect(send(collector, "DELETE", "/api/flags/beta", headers: admin).status == 404)
        #expect(send(collector, "/flags/evaluate", body: #"{"distinct_id":"u1"}"#).body?["flags"] == [:])
    }

    @Test func flagsSurviveARestart() throws {
        let directory = temporaryDirectory()
        do {
            let collector = try startCollector { $0.dataDirectory = directory }
            #expect(
                send(collector, "PUT", "/api/flags/kept", body: #"{"key":"kept","rules":[{"rolloutPct":100}]}"#).status
                    == 201)
            collector.stop()
        }
        let collector = try startCollector { $0.dataDirectory = directory }
        defer { collector.stop() }
        #expect(
            send(collector, "/flags/evaluate", body: #"{"distinct_id":"u"}"#).body?["flags"]?["kept"]?["enabled"]
                == true)
    }

    @Test func theCLIManagesFlagsWithTheAdminSecret() async throws {
        let collector = try startCollector { $0.adminToken = "admin-secret" }
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let secretFile = temporaryDirectory().appendingPathComponent("secret")
        try Data("admin-secret\n".utf8).write(to: secretFile)
        let auth = ["--host", host, "--auth-token-file", secretFile.path]
        let set = try await CLITests.run(
            [
                "flags", "set", "checkout", "--rollout", "40", "--variant", "control:50", "--variant", "test:50",
                "--distinct-id", "qa-1",
            ] + auth)
        #expect(set.status == 0, "\(set.error)")
        #expect(try await CLITests.run(["flags", "set", "beta", "--payload", #"{"x":1}"#] + auth).status == 0)
        #expect(try await CLITests.run(["flags", "set", "checkout", "--host", host]).status == 1)  // no secret: refused
        #expect(try await CLITests.run(["flags", "set", "bad", "--variant", "a:60"] + auth).status == 2)
        #expect(try await CLITests.run(["flags", "set", "bad", "--rollout", "120"] + auth).status == 2)
        #expect(try await CLITests.run(["flags", "set", "bad", "--payload", "{"] + auth).status == 2)
        #expect(try await CLITests.run(["flags", "set"] + auth).status == 2)

        let list = try await CLITests.run(["flags", "list"] + auth)
        #expect(list.status == 0)
        #expect(list.output.contains("checkout") && list.output.contains("control 50%, test 50%"))
        #expect(list.output.contains("ids [qa-1] 100%; 40%"))
        let show = try await CLITests.run(["flags", "show", "beta"] + auth)
        #expect(show.output.contains(#"payload:  {"x":1}"#))
        let json = try await CLITests.run(["flags", "show", "checkout", "--json"] + auth)
        #expect(CohorlyValue(json: json.output)?["rules"]?.arrayValue?.count == 2)
        #expect(try await CLITests.run(["flags", "show", "nope"] + auth).status == 1)

        // The stored flag evaluates as the rule says: qa-1 always, others by bucket.
        let answer = send(collector, "/flags/evaluate", body: #"{"distinct_id":"qa-1"}"#)
        #expect(answer.body?["flags"]?["checkout"]?["reason"] == "rule:0")

        #expect(try await CLITests.run(["flags", "delete", "checkout"] + auth).status == 0)
        #expect(try await CLITests.run(["flags", "delete", "checkout"] + auth).status == 1)
        #expect(await !(try CLITests.run(["flags", "list"] + auth).output.contains("checkout")))
    }

    @Test(arguments: [false, true])
    func theClientEvaluatesAgainstTheCollector(throughPostHog: Bool) async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        #expect(
            send(
                collector, "PUT", "/api/flags/rollout",
                body:
                    #"{"key":"rollout","variants":[{"key":"a","rolloutPct":50},{"key":"b","rolloutPct":50,"payload":{"n":2}}],"rules":[{"rolloutPct":50}]}"#
            ).status == 201)
        var options = CohorlyOptions()
        options.storageDirectory = temporaryDirectory()
        options.flushInterval = 3600
        options.loadFeatureFlags = false
        // The same definitions over both wires: Cohorly's /flags/evaluate and PostHog's /flags?v=2.
        let client =
            throughPostHog
            ? Cohorly(posthog: try PostHogConfiguration(host: collector.baseURL, apiKey: "t1"), options: options)
            : Cohorly(apiHost: collector.baseURL, token: "t1", options: options)
        defer { client.shutdown() }
        for id in ["alice", "bob", "carol", "dave", "erin"] {
            client.identify(id)
            await client.reloadFeatureFlags()
            let details = client.getFeatureFlagDetails("rollout", fallback: "off")
            // The same rule computed here.
            if Self.unit("rollout.\(id)") < 0.5 {
                let variant = Self.unit("rollout.\(id)variant") < 0.5 ? "a" : "b"
                #expect(details.source == .network && details.value == .variant(variant), "\(id)")
                #expect(details.payload == (variant == "b" ? ["n": 2] : nil), "\(id)")
            } else {
                #expect(details.source == .network && details.value == .bool(false) && !details.enabled, "\(id)")
            }
        }
    }
}
