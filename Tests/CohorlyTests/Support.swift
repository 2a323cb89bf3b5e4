import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

/// This run's directory for temporary files: `$TMPDIR/cohorly-client-tests/<pid>`, removed when the run exits.
/// Creating it removes the directories of earlier runs whose process is gone (killed before it could), so test
/// files never pile up.
let testRoot: URL = {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("cohorly-client-tests")
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
    for entry in entries {
        guard let pid = Int32(entry), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
        try? FileManager.default.removeItem(at: base.appendingPathComponent(entry))
    }
    let root = base.appendingPathComponent(String(getpid()))
    try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    atexit {
        try? FileManager.default.removeItem(at: testRoot)
        rmdir(testRoot.deletingLastPathComponent().path)  // when no other run uses it
    }
    return root
}()

/// A fresh directory under this run's `testRoot`.
func temporaryDirectory() -> URL {
    let url = testRoot.appendingPathComponent(UUID().uuidString)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A loopback collector (in-memory storage) accepting `test-token`, stopped by the caller.
func startCollector(_ configure: (inout CollectorConfiguration) -> Void = { _ in }) throws -> Collector {
    var configuration = CollectorConfiguration()
    configuration.tokens = ["test-token"]
    configure(&configuration)
    let collector = try Collector(configuration: configuration)
    try collector.start()
    return collector
}

/// Records every delivery attempt and debug line of a client.
final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var attemptList: [DeliveryAttempt] = []
    private var lineList: [String] = []

    var attempts: [DeliveryAttempt] { lock.withLock { attemptList } }
    var lines: [String] { lock.withLock { lineList } }
    func add(_ attempt: DeliveryAttempt) { lock.withLock { attemptList.append(attempt) } }
    func add(_ line: String) { lock.withLock { lineList.append(line) } }

    /// Delays of the retry outcomes, in order.
    var retryDelays: [Double] {
        attempts.compactMap { attempt in
            if case .retry(let delay, _) = attempt.outcome { return delay }
            return nil
        }
    }
}

/// Client options for tests: millisecond backoff (jitter pinned to the midpoint), no timer flushes, short timeouts.
func testOptions(_ directory: URL, recorder: Recorder? = nil) -> CohorlyOptions {
    var options = CohorlyOptions()
    options.storageDirectory = directory
    options.flushInterval = 3600
    options.flushAt = 1_000_000
    options.retry.baseDelay = 0.05
    options.retry.maxDelay = 0.4
    options.retry.random = { 0.5 }
    options.retry.requestTimeout = 5
    options.retry.connectTimeout = 2
    options.debug = true
    // No flags evaluation at start (a flags request would also open a connection that later requests reuse).
    options.loadFeatureFlags = false
    if let recorder {
        options.logHandler = { recorder.add($0) }
        options.attemptObserver = { recorder.add($0) }
    } else {
        options.logHandler = { _ in }
    }
    return options
}

/// A client of `collector` with `testOptions`, adjusted by `configure`.
func makeClient(
    _ collector: Collector, directory: URL = temporaryDirectory(), token: String? = "test-token",
    recorder: Recorder? = nil, _ configure: (inout CohorlyOptions) -> Void = { _ in }
) -> Cohorly {
    var options = testOptions(directory, recorder: recorder)
    configure(&options)
    return Cohorly(apiHost: collector.baseURL, token: token, options: options)
}

/// A queue directory holding one event, as a launch that died before sending it leaves it (for the senders that
/// take such queues over).
func queueLeftByALaunchThatDied(_ collector: Collector) -> URL {
    let directory = temporaryDirectory()
    let app = makeClient(collector, directory: directory)
    app.track("Queued by a launch that died")
    app.shutdown()
    return directory
}

/// The stored events' properties, parsed.
func storedProperties(_ collector: Collector, event: String? = nil) throws -> [Properties] {
    try collector.store.events(matching: EventQuery(event: event, limit: 1_000_000)).map {
        CohorlyValue(json: $0.propertiesJSON)?.objectValue ?? [:]
    }
}
