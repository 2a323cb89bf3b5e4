// `CohorlyCrashBench errors [--count N]`: the numbers `scripts/bench-errors` prints. Not a test. (`read-report`:
// ReportReading.swift.)
//
// captureError's cost on the caller's thread (p50, p99) next to two references measured in the same run: `track`
// of an event with the same properties, and `Thread.callStackReturnAddresses` (the standard library's own stack
// capture); then the cost of a capture the rate limit drops, the background work per event (symbols + JSON +
// queue), the first event's latency (debug files opened cold) and the memory the kept symbolicator holds.
import Cohorly
import CohorlyCrash
import Foundation

struct BenchError: Error, CustomStringConvertible {
    var code: Int
    var description: String { "bench failure \(code)" }
}

/// Answers 200 at once: the caller's cost and the background work only, no network. Keeps the first body, to
/// show the first event's innermost frame.
final class InstantTransport: Transport, @unchecked Sendable {
    private let lock = NSLock()
    private var first: [UInt8]?

    func send(_ request: TransportRequest) -> TransportResponse {
        lock.withLock { if first == nil { first = request.body } }
        return .http(status: 200, retryAfter: nil, body: Array(#"{"status":1,"inserted":0}"#.utf8))
    }

    /// The innermost physical frame's function of the first event sent (symbolicated on the device).
    var firstSiteFunction: String {
        let body = lock.withLock { first } ?? []
        let frames =
            CohorlyValue(bytes: body)?.arrayValue?.first?["properties"]?["$exception_list"]?.arrayValue?.first?[
                "stacktrace"]?["frames"]?.arrayValue ?? []
        return frames.last { $0["inline"] != true }?["function"]?.stringValue ?? "(none)"
    }
}

func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

func residentMegabytes() -> Double {
    let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = text.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

/// p50 and p99 in microseconds.
func percentiles(_ samples: [Double]) -> (Double, Double) {
    let sorted = samples.sorted()
    return (sorted[sorted.count / 2] * 1e6, sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1e6)
}

@inline(never) func fail(_ code: Int) throws { throw BenchError(code: code) }

@inline(never) func failBelow(_ code: Int) throws { try fail(code) }

/// A throw two calls below its catch.
@inline(never) func throwAndCatch(_ code: Int) -> Int {
    do {
        try failBelow(code)
        return 0
    } catch {
        return 1
    }
}

/// A few frames of app code above the capture, as in an app.
@inline(never) func handle(_ client: Cohorly, _ code: Int, depth: Int, samples: inout [Double]) {
    if depth > 0 { return handle(client, code, depth: depth - 1, samples: &samples) }
    do { try fail(code) } catch {
        let start = now()
        client.captureError(error, properties: ["code": .int(code), "screen": "Checkout"])
        samples.append(now() - start)
    }
}

func client(_ directory: String, limit: Int, transport: InstantTransport = InstantTransport()) -> Cohorly {
    var options = CohorlyOptions()
    options.storageDirectory = URL(fileURLWithPath: directory)
    options.flushInterval = 3600
    options.flushAt = .max
    options.maxQueueSize = 1_000_000
    options.loadFeatureFlags = false
    options.transport = transport
    let client = Cohorly(apiHost: URL(fileURLWithPath: "/"), token: "bench", options: options)
    CohorlyCrash.setHandledErrorOptions(HandledErrorOptions(maxPerFingerprint: limit), for: client)
    return client
}

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "read-report" { exit(readReport(mode: arguments[2], path: arguments[3])) }
guard arguments.count >= 3, arguments[1] == "errors" else {
    FileHandle.standardError.write(
        Data(
            "usage: CohorlyCrashBench errors DIR [--count N] | read-report tree|stream|event-tree|event-stream FILE\n"
                .utf8))
    exit(2)
}
let directory = arguments[2]
let count = arguments.firstIndex(of: "--count").flatMap { Int(arguments[$0 + 1]) } ?? 5_000
let memoryBefore = residentMegabytes()

// 1. The first event: unwinder loaded, modules listed, debug files opened and indexed (cold).
let firstTransport = InstantTransport()
let first = client(directory + "/first", limit: .max, transport: firstTransport)
var ignored: [Double] = []
let coldStart = now()
handle(first, 0, depth: 8, samples: &ignored)
_ = await first.flush()
let cold = now() - coldStart
let memoryAfterFirst = residentMegabytes()
print(String(format: "first event (cold: unwinder, modules, debug files): %.1f ms to queued and flushed", cold * 1e3))
print(
    "first event's innermost frame (release build; must be the catching function): \(firstTransport.firstSiteFunction)")
print(
    String(
        format: "resident memory: %.1f MB before, %.1f MB after the first event (symbolicator kept 30 s)",
        memoryBefore, memoryAfterFirst))

// 2. The caller's cost, warm, every event sent (no rate limit), with the references in the same run.
let unlimited = client(directory + "/unlimited", limit: .max)
var captureSamples: [Double] = []
var trackSamples: [Double] = []
var stackSamples: [Double] = []
captureSamples.reserveCapacity(count)
let backgroundStart = now()
for index in 0..<count {
    handle(unlimited, index, depth: 8, samples: &captureSamples)
    let trackStart = now()
    unlimited.track("Checkout Failed", properties: ["code": .int(index), "screen": "Checkout"])
    trackSamples.append(now() - trackStart)
    let stackStart = now()
    let addresses = Thread.callStackReturnAddresses
    stackSamples.append(now() - stackStart)
    precondition(!addresses.isEmpty)
}
_ = await unlimited.flush()
let background = now() - backgroundStart
let (capture50, capture99) = percentiles(captureSamples)
let (track50, track99) = percentiles(trackSamples)
let (stack50, stack99) = percentiles(stackSamples)
print(
    String(
        format: "captureError on the caller: p50 %.2f µs, p99 %.2f µs (%d calls, each sent)", capture50, capture99,
        count))
print(
    String(
        format: "  track, same properties:   p50 %.2f µs, p99 %.2f µs -> captureError/track p50 %.1fx", track50,
        track99, capture50 / track50))
print(
    String(
        format: "  Thread.callStackReturnAddresses: p50 %.2f µs, p99 %.2f µs -> captureError/callStack p50 %.2fx",
        stack50,
        stack99, capture50 / stack50))
print(
    String(
        format: "background (symbols, event, queue) until all %d were flushed: %.2f s, %.0f µs per event", count,
        background,
        background / Double(count) * 1e6))

// 3. An error in a loop: the default rate limit (10 per minute per site) drops all but the first 10.
let limited = client(directory + "/limited", limit: 10)
var limitedSamples: [Double] = []
for index in 0..<count { handle(limited, index, depth: 8, samples: &limitedSamples) }
_ = await limited.flush()
let (limited50, limited99) = percentiles(Array(limitedSamples.dropFirst(10)))
print(
    String(
        format: "captureError dropped by the rate limit: p50 %.2f µs, p99 %.2f µs (%d calls, 10 sent)", limited50,
        limited99, count))
print(String(format: "resident memory at the end: %.1f MB", residentMegabytes()))

// 4. A throw + catch without and with the throw-site hook (`_swift_willThrow`), in alternating rounds.
let throwsPerRound = 2000
var withoutHook: [Double] = []
var withHook: [Double] = []
for round in 0..<40 {
    let hooked = round % 2 == 1
    CohorlyCrash.recordThrowSites(hooked)
    let start = now()
    var caught = 0
    for index in 0..<throwsPerRound { caught += throwAndCatch(index) }
    precondition(caught == throwsPerRound)
    let perThrow = (now() - start) / Double(throwsPerRound)
    if round >= 2 { hooked ? withHook.append(perThrow) : withoutHook.append(perThrow) }
}
let (plain50, _) = percentiles(withoutHook)
let (hooked50, _) = percentiles(withHook)
print(
    String(
        format: "throw + catch (2 calls deep): without the hook %.3f µs, with it %.3f µs -> %.1fx, +%.3f µs per throw"
            + " (goal <= 2 µs; medians of %d rounds of %d)", plain50, hooked50, hooked50 / plain50, hooked50 - plain50,
        withHook.count, throwsPerRound))
let throwSiteTransport = InstantTransport()
let throwSite = client(directory + "/throw-site", limit: .max, transport: throwSiteTransport)
handle(throwSite, 0, depth: 8, samples: &ignored)
_ = await throwSite.flush()
print(
    "with the hook, a captured error's innermost frame (the throwing function): \(throwSiteTransport.firstSiteFunction)"
)
CohorlyCrash.recordThrowSites(false)
for client in [first, unlimited, limited, throwSite] { client.shutdown() }
