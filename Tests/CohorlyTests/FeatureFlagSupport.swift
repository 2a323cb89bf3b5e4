import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

/// A transport that answers `/flags/evaluate` from a script (one answer per request, the last repeated) and every
/// other request with 200, recording what it was sent.
final class FlagsTransport: Transport, @unchecked Sendable {
    private let lock = NSLock()
    private var script: [TransportResponse]
    private var sent: [TransportRequest] = []
    /// When set, a flags request waits for it before answering (to interleave identity changes).
    var gate: DispatchSemaphore?
    /// Signalled when a flags request arrives.
    let arrived = DispatchSemaphore(value: 0)

    init(_ script: [TransportResponse]) { self.script = script }

    /// A 200 answer carrying `json`.
    static func answer(_ json: String) -> TransportResponse {
        .http(status: 200, retryAfter: nil, body: Array(json.utf8))
    }

    func send(_ request: TransportRequest) -> TransportResponse {
        let isFlags = Self.isFlags(request)
        let (response, gate): (TransportResponse, DispatchSemaphore?) = lock.withLock {
            sent.append(request)
            guard isFlags else { return (Self.accepted(request), nil) }
            let next = script.count > 1 ? script.removeFirst() : script.first ?? .failure("no script")
            return (next, self.gate)
        }
        if isFlags {
            arrived.signal()
            gate?.wait()
        }
        return response
    }

    /// The success answer of the capture endpoint `request` went to: PostHog capture V1's per-event results, else
    /// the Cohorly API's.
    static func accepted(_ request: TransportRequest) -> TransportResponse {
        let body = request.url.path.hasSuffix("/analytics/events") ? #"{"results":{}}"# : #"{"status":1,"inserted":0}"#
        return answer(body)
    }

    /// A flags request: Cohorly's `/flags/evaluate` or PostHog's `/flags`.
    static func isFlags(_ request: TransportRequest) -> Bool {
        request.url.path.hasSuffix("/flags/evaluate") || request.url.path.hasSuffix("/flags")
    }

    /// The flags requests sent.
    var flagsSent: [TransportRequest] { lock.withLock { sent.filter(Self.isFlags) } }

    /// Replaces the remaining answers.
    func script(_ responses: [TransportResponse]) { lock.withLock { script = responses } }

    /// The flags requests' bodies, parsed.
    var flagsRequests: [Properties] {
        lock.withLock {
            sent.filter(Self.isFlags).map {
                CohorlyValue(json: String(decoding: $0.body, as: UTF8.self))?.objectValue ?? [:]
            }
        }
    }

    var flagsHeaders: [[(String, String)]] {
        lock.withLock { sent.filter(Self.isFlags).map(\.headers) }
    }

    /// Every tracked event sent to `/track`, in order.
    var trackedEvents: [(name: String, properties: Properties)] {
        lock.withLock {
            sent.filter { $0.url.path.hasSuffix("/track") }.flatMap { request -> [(String, Properties)] in
                let array = CohorlyValue(json: String(decoding: request.body, as: UTF8.self))?.arrayValue ?? []
                return array.compactMap { item in
                    guard let object = item.objectValue, let name = object["event"]?.stringValue else { return nil }
                    return (name, object["properties"]?.objectValue ?? [:])
                }
            }
        }
    }

    /// The `$feature_flag_called` events sent.
    var exposures: [Properties] { trackedEvents.filter { $0.name == "$feature_flag_called" }.map(\.properties) }
}

/// A settable clock for flag cache ages.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }
    var now: Date { lock.withLock { current } }
    func advance(_ seconds: TimeInterval) { lock.withLock { current += seconds } }
}

/// Writes a flag cache (and the identity it belongs to) into a client directory before a client opens it.
func seedFlagCache(
    _ directory: URL, distinctId: String = "user-1", storedAt: Date?,
    flags: String = #"{"checkout":{"enabled":true,"variant":"cached"}}"#
) throws {
    let store = try SQLiteQueueStore(path: directory.appendingPathComponent("queue.sqlite").path)
    var cache = #"{"distinct_id":"\#(distinctId)","flags":\#(flags)"#
    if let storedAt { cache += #","stored_at":\#(Int(storedAt.timeIntervalSince1970 * 1000))"# }
    cache += "}"
    _ = try store.apply(
        [
            .setMeta(MetaKey.anonymousId, "anon-1"), .setMeta(MetaKey.distinctId, distinctId),
            .setMeta(MetaKey.identified, "1"), .setMeta(FeatureFlagStore.metaKey, cache),
        ], limit: 100)
}

/// The persisted flag cache of a client directory, parsed (nil when absent).
func persistedFlagCache(_ client: Cohorly) -> Properties? {
    client.store.meta(FeatureFlagStore.metaKey).flatMap { CohorlyValue(json: $0)?.objectValue }
}

/// A client over `transport` with a settable clock; flags are not loaded at start unless `load`.
func makeFlagsClient(
    _ transport: FlagsTransport, directory: URL = temporaryDirectory(), clock: TestClock = TestClock(),
    policy: FlagPersistence = .persistenceUntilNetworkSuccess, load: Bool = false, recorder: Recorder? = nil
) -> Cohorly {
    var options = testOptions(directory, recorder: recorder)
    options.transport = transport
    options.flagPersistence = policy
    options.loadFeatureFlags = load
    options.flagClock = { clock.now }
    return Cohorly(apiHost: URL(string: "http://127.0.0.1:9")!, token: "test-token", options: options)
}

/// Waits until everything scheduled on the client's flags queue so far is done.
func flagsSettled(_ client: Cohorly) { client.flags.queue.sync {} }

let networkAnswer = #"""
    {"flags":{"checkout":{"enabled":true,"variant":"test","payload":{"color":"blue"},"reason":"rule:0"},
    "beta":{"enabled":true,"variant":null,"payload":null,"reason":"rule:1"},
    "old":{"enabled":false,"variant":null,"payload":null,"reason":"inactive"}}}
    """#

/// The client-side flag suites, one at a time: each holds clients, servers and connections, and the whole test
/// process stays under the descriptors libmicrohttpd's select() accepts.
@Suite(.serialized) struct FlagClientSuites {}
