import Cohorly
import CohorlyCrash
import Foundation

/// `CrashDemo bench-breadcrumbs [--tracks N]`: what breadcrumbs cost on the `track` path (scripts/bench-breadcrumbs
/// prints it). Two clients in one process, measured in alternating blocks: one that CohorlyCrash does not
/// observe (the reference: the hook costs one atomic load) and one whose track calls become breadcrumbs.
enum BreadcrumbBench {
    static func client(_ directory: URL, _ name: String) -> Cohorly {
        var options = CohorlyOptions()
        options.storageDirectory = directory.appendingPathComponent(name)
        options.flushInterval = 3600
        options.flushAt = .max
        options.loadFeatureFlags = false
        return Cohorly(apiHost: URL(fileURLWithPath: "/"), token: "bench", options: options)
    }

    static func percentiles(_ samples: [UInt64]) -> (p50: Double, p99: Double) {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return (0, 0) }
        return (Double(sorted[sorted.count / 2]) / 1000, Double(sorted[sorted.count * 99 / 100]) / 1000)
    }

    static func time(_ body: () -> Void) -> UInt64 {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return DispatchTime.now().uptimeNanoseconds - start
    }

    static func run(count: Int) -> Never {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cohorly-bench-breadcrumbs-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = client(directory, "plain")
        let observed = client(directory, "observed")
        do {
            try CohorlyCrash.install(
                cohorly: observed,
                options: .init(reportDirectory: directory.appendingPathComponent("reports"), detachedSender: false))
        } catch {
            usage("install failed: \(error)")
        }
        let small: Properties = ["n": 1, "screen": "Home"]
        var large: Properties = ["cart": ["items": [1, 2, 3]], "note": .string(String(repeating: "x", count: 300))]
        for key in 0..<20 { large["key-\(key)"] = .int(key) }
        var samples: [String: [UInt64]] = [:]
        let block = 1000
        for round in 0..<max(1, count / block) {
            for (name, client) in [("plain", plain), ("observed", observed)].shuffled(seed: round) {
                for index in 0..<block {
                    samples[name, default: []].append(
                        time { client.track("bench", properties: ["n": .int(index), "screen": "Home"]) })
                }
                for _ in 0..<(block / 10) {
                    samples[name + "-large", default: []].append(time { client.track("bench", properties: large) })
                }
            }
            for _ in 0..<(block / 10) {
                samples["addBreadcrumb", default: []].append(
                    time { observed.addBreadcrumb("cart opened", data: small) })
            }
        }
        let plainSmall = percentiles(samples["plain"] ?? [])
        let observedSmall = percentiles(samples["observed"] ?? [])
        let plainLarge = percentiles(samples["plain-large"] ?? [])
        let observedLarge = percentiles(samples["observed-large"] ?? [])
        let add = percentiles(samples["addBreadcrumb"] ?? [])
        func line(_ label: String, _ value: (p50: Double, p99: Double)) -> String {
            String(format: "%@: p50 %.2f µs, p99 %.2f µs", label, value.p50, value.p99)
        }
        print(line("track(2 properties), no breadcrumbs (reference)", plainSmall))
        print(line("track(2 properties), breadcrumbs on", observedSmall))
        print(String(format: "  ratio p50 %.2f×", observedSmall.p50 / max(plainSmall.p50, 0.001)))
        print(line("track(22 properties), no breadcrumbs (reference)", plainLarge))
        print(line("track(22 properties), breadcrumbs on", observedLarge))
        print(String(format: "  ratio p50 %.2f×", observedLarge.p50 / max(plainLarge.p50, 0.001)))
        print(line("addBreadcrumb(message, 2 data keys)", add))
        plain.shutdown()
        observed.shutdown()
        exit(0)
    }
}

extension Array {
    /// The elements in an order that alternates with `seed` (even: as given, odd: reversed).
    fileprivate func shuffled(seed: Int) -> [Element] { seed % 2 == 0 ? self : reversed() }
}
