// `CohorlyTestApp bench --host URL --dir DIR`: the numbers `scripts/bench-client` prints. Not a test.
import Cohorly
import Foundation

enum Bench {
    static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    static func options(_ directory: String, maxQueue: Int = 1_000_000) -> CohorlyOptions {
        var options = CohorlyOptions()
        options.storageDirectory = URL(fileURLWithPath: directory)
        options.flushAt = 500
        options.maxBatchSize = 500
        options.maxQueueSize = maxQueue
        options.flushInterval = 0.5
        options.retry.baseDelay = 0.05
        options.retry.maxDelay = 0.5
        return options
    }

    static func run(host: URL, directory: String, count: Int) async {
        // 1. track() cost on the caller's thread.
        let trackClient = Cohorly(apiHost: host, token: "bench-token", options: options(directory + "/track"))
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for index in 0..<count {
            let start = now()
            trackClient.track("bench", properties: ["n": .int(index), "screen": "Home"])
            samples.append(now() - start)
        }
        let persistStart = now()
        trackClient.waitUntilPersisted()
        let persistElapsed = now() - persistStart
        samples.sort()
        let p50 = samples[samples.count / 2] * 1e6
        let p99 = samples[samples.count * 99 / 100] * 1e6
        print(String(format: "track() on the caller's thread: p50 %.2f µs, p99 %.2f µs (%d calls)", p50, p99, count))
        print(String(format: "committed to SQLite within %.2f s after the last track()", persistElapsed))

        // 2. Delivery throughput: everything tracked above, until the collector acknowledged it all.
        let start = now()
        while await !trackClient.flush() {}
        let elapsed = now() - start
        print(
            String(
                format: "delivered: %d events in %.2f s after tracking ended (%.0f events/s, batches of 500)", count,
                elapsed, Double(count) / elapsed))
        trackClient.shutdown()

        // 2b. The client's own share: the same, with a transport that answers 200 at once.
        var instantOptions = options(directory + "/instant")
        instantOptions.transport = InstantTransport()
        let instant = Cohorly(apiHost: host, token: "bench-token", options: instantOptions)
        for index in 0..<count { instant.track("bench", properties: ["n": .int(index), "screen": "Home"]) }
        instant.waitUntilPersisted()
        let instantStart = now()
        while await !instant.flush() {}
        let instantElapsed = now() - instantStart
        print(
            String(
                format: "client side only (instant 200 transport, already persisted): %.0f events/s",
                Double(count) / instantElapsed))
        instant.shutdown()

        // 2c. The two destinations side by side, the same way: tracked and committed first, then delivered to the
        // collector in batches of 500 — the Cohorly API (`/track`) and PostHog capture V1 (`/i/v1/analytics/events`).
        var rates: [Double] = []
        for posthog in [false, true] {
            var destinationOptions = options(directory + (posthog ? "/posthog" : "/cohorly"))
            destinationOptions.flushInterval = 3600
            destinationOptions.flushAt = .max
            let client: Cohorly
            if posthog, let configuration = try? PostHogConfiguration(host: host.absoluteString, apiKey: "bench-token")
            {
                client = Cohorly(posthog: configuration, options: destinationOptions)
            } else {
                client = Cohorly(apiHost: host, token: "bench-token", options: destinationOptions)
            }
            for index in 0..<count { client.track("bench", properties: ["n": .int(index), "screen": "Home"]) }
            client.waitUntilPersisted()
            let destinationStart = now()
            while await !client.flush() {}
            rates.append(Double(count) / (now() - destinationStart))
            client.shutdown()
        }
        print(
            String(
                format:
                    "destinations, same run: Cohorly API %.0f events/s, PostHog capture V1 %.0f events/s (%.0f %% of the Cohorly API's)",
                rates[0], rates[1], 100 * rates[1] / rates[0]))

        // 2d. Exceptions (handled errors, 20 frames each) to the Cohorly API (`/track`, batches of 500) and to Sentry
        // (one envelope per event, the collector's envelope endpoint), the same way: committed first, then delivered.
        let exceptions = min(count, 20_000)
        var exceptionRates: [Double] = []
        for sentry in [false, true] {
            var destinationOptions = options(directory + (sentry ? "/sentry" : "/cohorly-exceptions"))
            destinationOptions.flushInterval = 3600
            destinationOptions.flushAt = .max
            let client: Cohorly
            if sentry {
                let dsn = "http://bench-token@\(host.host ?? "127.0.0.1"):\(host.port ?? 80)/1"
                guard var configuration = try? SentryConfiguration(dsn: dsn) else { break }
                configuration.sessions = false
                client = Cohorly(sentry: configuration, options: destinationOptions)
            } else {
                client = Cohorly(apiHost: host, token: "bench-token", options: destinationOptions)
            }
            for index in 0..<exceptions { client.reserveLiveEvent()?.fulfill(exception(index)) }
            client.waitUntilPersisted()
            let exceptionStart = now()
            var attempts = 0
            while await !client.flush(), attempts < 20 { attempts += 1 }
            exceptionRates.append(client.queuedCount == 0 ? Double(exceptions) / (now() - exceptionStart) : 0)
            client.shutdown()
        }
        if exceptionRates.count == 2 {
            print(
                String(
                    format:
                        "exceptions, same run (%d handled errors): Cohorly API %.0f events/s, Sentry envelopes %.0f events/s (%.0f %% of the Cohorly API's)",
                    exceptions, exceptionRates[0], exceptionRates[1], 100 * exceptionRates[1] / exceptionRates[0]))
        }

        // 3. Collector ingest: 2 threads posting prebuilt 500-event batches.
        let batch =
            "["
            + (0..<500).map { index in
                #"{"event":"ingest","properties":{"distinct_id":"u","$insert_id":"ID-\#(index)","n":\#(index)}}"#
            }.joined(separator: ",") + "]"
        let requests = max(1, count / 500 / 2)
        let ingestStart = now()
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            let transport = CurlTransport()
            for round in 0..<requests {
                let body = batch.replacingOccurrences(of: "ID-", with: "w\(worker)-r\(round)-")
                let request = TransportRequest(
                    url: host.appendingPathComponent("track"),
                    headers: [("Content-Type", "application/json"), ("X-Cohorly-Token", "bench-token")],
                    body: Array(body.utf8), timeout: 30, connectTimeout: 5)
                _ = transport.send(request)
            }
        }
        let ingestElapsed = now() - ingestStart
        let ingested = requests * 2 * 500
        print(
            String(
                format: "collector ingest: %d events in %.2f s (%.0f events/s, 2 clients)", ingested, ingestElapsed,
                Double(ingested) / ingestElapsed))

        // 4. Memory with the server down for the whole run.
        let down = Cohorly(
            apiHost: URL(string: "http://127.0.0.1:1") ?? host, token: "bench-token",
            options: options(directory + "/down", maxQueue: 10_000))
        let before = residentMegabytes()
        var checkpoints: [Int] = []
        for round in 0..<4 {
            for index in 0..<count { down.track("offline", properties: ["n": .int(round * count + index)]) }
            down.waitUntilPersisted()
            checkpoints.append(residentMegabytes())
        }
        let resident = checkpoints.map { "\($0) MB" }.joined(separator: ", ")
        print(
            "server down: tracked \(count * 4) events, queue holds \(down.queuedCount) (bound 10,000), dropped \(down.droppedCount); resident memory \(before) MB before, then \(resident) after each \(count)"
        )
        down.shutdown()
    }

    /// A handled error as CohorlyCrash makes it: 20 symbolicated frames in two images.
    static func exception(_ index: Int) -> QueuedException {
        let frames = (0..<20).map { depth in
            CapturedException.StackFrame(
                Frame(UInt64(0x401000 + depth * 0x40), kind: .returnAddress), inApp: depth < 17,
                symbols: [
                    FrameSymbol(
                        function: "Bench.step\(depth)(input:) -> Int", rawFunction: "$s5Bench4step",
                        file: "/src/Bench/Steps.swift", line: 29 - depth, column: 5, inlined: false)
                ])
        }
        let description = CrashDescription(
            type: "Bench.ParseError", value: "bad input \(index)", mechanism: "generic", issueName: nil)
        var exception = CapturedException(
            description: description, facts: CrashReason.Facts(given: description), level: "error", handled: true)
        exception.insertId = UUID().uuidString.lowercased()
        exception.timestampMs = Int64(Date().timeIntervalSince1970 * 1000)
        exception.threads = [CapturedException.Thread(tid: 1, name: nil, crashed: true, frames: frames)]
        exception.images = [
            CapturedException.Image(
                path: "/opt/bench/bin/Bench", base: 0x400000, size: 65_536,
                buildId: "68220ae2c65d65c1b6aaa12fa6765a6ec2f5f434")
        ]
        exception.properties = ["release": "Bench@1.0", "n": .int(index)]
        return QueuedException(exception)
    }

    /// Current resident set size in MB (from /proc/self/statm).
    static func residentMegabytes() -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / (1 << 20)
    }
}

/// Answers the Cohorly API's success answer without any I/O: isolates the client's own delivery cost.
struct InstantTransport: Transport {
    func send(_ request: TransportRequest) -> TransportResponse {
        .http(status: 200, retryAfter: nil, body: Array(#"{"status":1,"inserted":0}"#.utf8))
    }
}
