// `CohorlyTestApp bench-flags --host URL --dir DIR [--count N]`: the numbers `scripts/bench-flags` prints. Not a
// test. Flags are evaluated by the collector at --host (`cohorly serve`, flags set by the script).
import Cohorly
import Foundation

enum FlagsBench {
    static func run(host: URL, directory: String, count: Int) async {
        var options = Bench.options(directory)
        options.flushInterval = 3600
        let client = Cohorly(apiHost: host, token: "bench-token", options: options)
        defer { client.shutdown() }
        await client.reloadFeatureFlags()
        guard client.getFeatureFlag("bench-flag") != nil else {
            print("bench-flags: the collector served no flag \"bench-flag\"")
            exit(1)
        }
        // The reference: the same lookup in a dictionary behind a lock, what any thread-safe read costs at least.
        let lock = NSLock()
        let reference: [String: String] = (0..<64).reduce(into: ["bench-flag": "test"]) { $0["other-\($1)"] = "x" }
        func measure(_ body: () -> Bool) -> (p50: Double, p99: Double) {
            var samples: [Double] = []
            samples.reserveCapacity(count)
            var hits = 0
            for _ in 0..<count {
                let start = Bench.now()
                if body() { hits += 1 }
                samples.append(Bench.now() - start)
            }
            precondition(hits == count)
            samples.sort()
            return (samples[samples.count / 2] * 1e9, samples[samples.count * 99 / 100] * 1e9)
        }
        let flag = measure { client.getFeatureFlag("bench-flag") != nil }
        let enabled = measure { client.isFeatureEnabled("bench-flag") }
        let base = measure { lock.withLock { reference["bench-flag"] } != nil }
        print(
            String(
                format: "getFeatureFlag on the caller's thread: p50 %.0f ns, p99 %.0f ns (%d reads)", flag.p50,
                flag.p99, count))
        print(
            String(
                format: "isFeatureEnabled on the caller's thread: p50 %.0f ns, p99 %.0f ns", enabled.p50, enabled.p99))
        print(String(format: "reference (NSLock + Dictionary lookup): p50 %.0f ns, p99 %.0f ns", base.p50, base.p99))
        print(String(format: "ratio getFeatureFlag / reference (p50): %.2f", flag.p50 / max(base.p50, 1)))
    }
}
