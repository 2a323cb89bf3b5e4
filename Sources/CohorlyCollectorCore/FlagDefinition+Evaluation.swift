import CCrypto
import CohorlyCollectorAPI
import CohorlyJSON

/// Flag evaluation (the collector's `/flags`): the definition is the API contract (CohorlyCollectorAPI), the
/// evaluation the collector's.
extension FlagDefinition {
    /// The evaluation for `distinctId`, byte for byte the SDKs' local evaluation: inactive → `inactive`; else the
    /// first rule whose id list (if any) holds the id and whose rollout admits its bucket → enabled, `rule:<i>`,
    /// with the rule's variant or the one the variant hash picks; else `no_match`. Nil when libcrypto is missing.
    package func evaluate(_ distinctId: String) -> CohorlyValue? {
        guard active else { return Self.result(enabled: false, variant: nil, payload: nil, reason: "inactive") }
        for (index, rule) in rules.enumerated() {
            if let ids = rule.distinctIds, !ids.contains(distinctId) { continue }
            guard let bucket = FlagHash.unit("\(key).\(distinctId)") else { return nil }
            if bucket >= rule.rolloutPct / 100 { continue }
            var chosen = rule.variant.flatMap { name in variants.first { $0.key == name } }
            if chosen == nil, !variants.isEmpty {
                guard let hash = FlagHash.unit("\(key).\(distinctId)variant") else { return nil }
                chosen = Self.variant(variants, at: hash)
            }
            let payload = variants.isEmpty ? self.payload : chosen?.payload
            return Self.result(enabled: true, variant: chosen?.key, payload: payload, reason: "rule:\(index)")
        }
        return Self.result(enabled: false, variant: nil, payload: nil, reason: "no_match")
    }

    /// The variant whose cumulative `rolloutPct/100` range holds `hash` (the last one for float drift).
    static func variant(_ variants: [Variant], at hash: Double) -> Variant? {
        var cumulative = 0.0
        for variant in variants {
            cumulative += variant.rolloutPct / 100
            if hash < cumulative { return variant }
        }
        return variants.last
    }

    private static func result(enabled: Bool, variant: String?, payload: CohorlyValue?, reason: String) -> CohorlyValue
    {
        [
            "enabled": .bool(enabled), "variant": variant.map { .string($0) } ?? .null, "payload": payload ?? .null,
            "reason": .string(reason),
        ]
    }
}

/// The flag bucketing hash: the first 15 hex digits of SHA-1 of the input, as a number, ÷ 2^60 — a unit
/// interval value the same in every Cohorly SDK. SHA-1 comes from the system's libcrypto (loaded on first use,
/// CCrypto), not hand-written code: the bucket must match the SDKs' bit for bit, and a maintained library is
/// the one implementation nobody has to prove.
package enum FlagHash {
    /// The hash of `input`'s UTF-8 bytes in [0, 1), nil when libcrypto cannot be loaded.
    package static func unit(_ input: String) -> Double? {
        var digest = [UInt8](repeating: 0, count: 20)
        var bytes = Array(input.utf8)
        let ok = bytes.withUnsafeMutableBytes { data in
            digest.withUnsafeMutableBufferPointer { out in
                cly_crypto_sha1(data.baseAddress, data.count, out.baseAddress) == 1
            }
        }
        guard ok else { return nil }
        // 15 hex digits = the first 60 bits: the first 7.5 bytes.
        var value: UInt64 = 0
        for byte in digest[0..<8] { value = value << 8 | UInt64(byte) }
        return Double(value >> 4) / 1_152_921_504_606_846_976  // 2^60
    }
}
