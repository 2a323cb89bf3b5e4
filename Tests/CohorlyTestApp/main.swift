// A tiny app the client tests run as a real process (and kill -9):
//   CohorlyTestApp track --host URL --dir DIR --count N [--batch B] [--token T]
//       tracks N events (property "seq" = 0..<N), prints "persisted N" once they are on disk, then flushes.
//   CohorlyTestApp track-chunks --host URL --dir DIR --start S --count N --chunk C
//       tracks seq S..<S+N in chunks, printing "persisted K" once seq < K are on disk (delivery runs meanwhile).
//   CohorlyTestApp track-and-exit --host URL --dir DIR --count N
//       tracks N events and calls exit(0) at once (nothing sent, nothing awaited).
//   CohorlyTestApp track-then-exit-on-input --host URL --dir DIR --count N [--batch B]
//       tracks N events, prints "persisted N" once they are on disk (delivery runs meanwhile), then calls exit(0)
//       when a line arrives on stdin.
//   CohorlyTestApp flush --host URL --dir DIR [--batch B] [--token T]
//       only flushes what an earlier run left queued.
// Both print "flushed" and exit 0 once the queue is delivered.
//   CohorlyTestApp bench --host URL --dir DIR [--count N]   (scripts/bench-client)
//   CohorlyTestApp bench-flags --host URL --dir DIR [--count N]   (scripts/bench-flags)
//   CohorlyTestApp session --sentry DSN --host URL --dir DIR --end exit|wait [--errors N] [--monitor ID]
//       starts a launch's Sentry session (with N handled errors counted in it; as watched by a crash monitor that
//       knows the launch as ID, as CohorlyCrash does), prints "started" once it is on disk, then exits normally
//       or waits (to be killed). `--barrier FILE`: first says "ready" and waits for FILE's flock (the test holds it).
// `--posthog 1` sends through the PostHog destination (capture V1 to the host) instead of the Cohorly API;
// `--sentry DSN` through the Sentry destination.
import Cohorly
import Foundation

var options: [String: String] = [:]
let arguments = Array(CommandLine.arguments.dropFirst())
var index = 1
while index + 1 < arguments.count {
    options[arguments[index]] = arguments[index + 1]
    index += 2
}
guard let mode = arguments.first, let host = options["--host"].flatMap(URL.init(string:)),
    let directory = options["--dir"]
else {
    FileHandle.standardError.write(Data("usage: CohorlyTestApp track|flush --host URL --dir DIR [--count N]\n".utf8))
    exit(2)
}

if mode == "bench" {
    await Bench.run(host: host, directory: directory, count: Int(options["--count"] ?? "") ?? 200_000)
    exit(0)
}

if mode == "bench-flags" {
    await FlagsBench.run(host: host, directory: directory, count: Int(options["--count"] ?? "") ?? 1_000_000)
    exit(0)
}

var clientOptions = CohorlyOptions()
clientOptions.storageDirectory = URL(fileURLWithPath: directory)
clientOptions.flushInterval = 3600
clientOptions.flushAt = Int(options["--batch"] ?? "") ?? 50
clientOptions.maxBatchSize = Int(options["--batch"] ?? "") ?? 50
if mode == "track" {
    // Nothing is sent before everything is on disk (a size flush while tracking would send whatever the persister
    // had committed by then), so the flush sends full batches of B: the tests count what a batch holds.
    clientOptions.flushAt = .max
}
clientOptions.retry.baseDelay = 0.05
clientOptions.retry.maxDelay = 0.2
if mode == "track-then-exit-on-input" {
    // The test checks that the exit hook takes the answer in flight: under the full suite's load, handling it
    // (the answer read, 50 records deleted) can take longer than the hook's usual 2 s.
    clientOptions.exitExchangeWait = 120
}
let token = options["--token"] ?? "test-token"
if let barrier = options["--barrier"] {
    // `--barrier FILE`: says "ready", then waits while the test holds FILE's exclusive flock, so that launches the
    // test releases together create their clients at the same moment.
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    let fd = open(barrier, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { exit(2) }
    while flock(fd, LOCK_SH) != 0 && errno == EINTR {}
    close(fd)
}
let client: Cohorly
if let dsn = options["--sentry"] {
    guard let sentry = try? SentryConfiguration(dsn: dsn) else { exit(2) }
    client = Cohorly.initialize(sentry: sentry, options: clientOptions)
} else if options["--posthog"] == "1" {
    // --posthog 1: the same, through the PostHog destination (capture V1 to the host).
    guard var posthog = try? PostHogConfiguration(host: host.absoluteString, apiKey: token) else { exit(2) }
    posthog.retryBaseDelay = 0.05
    posthog.maxRetryDelay = 0.2
    client = Cohorly.initialize(posthog: posthog, options: clientOptions)
} else {
    client = Cohorly.initialize(apiHost: host, token: token, options: clientOptions)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

if mode == "session" {
    // A launch's session: on disk before "started"; ended at exit(0) by the exit hook, or never (killed).
    if let launchId = options["--monitor"] { client.crashMonitorStarted(launchId: launchId) }
    for _ in 0..<(Int(options["--errors"] ?? "") ?? 0) {
        let description = CrashDescription(
            type: "TestApp.Failure", value: "handled", mechanism: "generic", issueName: nil)
        var error = CapturedException(
            description: description, facts: CrashReason.Facts(given: description), level: "error", handled: true)
        error.insertId = UUID().uuidString.lowercased()
        error.timestampMs = Int64(Date().timeIntervalSince1970 * 1000)
        error.threads = [CapturedException.Thread(tid: 1, name: nil, crashed: true, frames: [])]
        client.reserveLiveEvent()?.fulfill(QueuedException(error))
    }
    client.waitUntilPersisted()
    say("started")
    if options["--end"] == "exit" { exit(0) }
    while true { sleep(60) }
}

if mode == "track-and-exit" {
    // Exits right after the last track(): what is still in memory is committed by the exit hook.
    for seq in 0..<(Int(options["--count"] ?? "") ?? 100) {
        client.track("test event", properties: ["seq": .int(seq)])
    }
    exit(0)
}

/// Tracks seq `range`, then prints "persisted K" (K the range's end) once they are on disk.
func trackPersisted(_ range: Range<Int>) {
    for seq in range {
        client.track("test event", properties: ["seq": .int(seq)])
    }
    client.waitUntilPersisted()
    say("persisted \(range.upperBound)")
}

if mode == "track-then-exit-on-input" {
    // Exits (normally) while delivery may be mid-exchange: the exit hook lets it end and starts no other.
    trackPersisted(0..<(Int(options["--count"] ?? "") ?? 100))
    _ = readLine()
    exit(0)
}

if mode == "track-chunks" {
    // Tracks seq start..<start+count, printing "persisted K" after each chunk is on disk, while delivery runs.
    let start = Int(options["--start"] ?? "") ?? 0
    let count = Int(options["--count"] ?? "") ?? 1000
    let chunk = Int(options["--chunk"] ?? "") ?? 50
    var seq = start
    while seq < start + count {
        trackPersisted(seq..<min(seq + chunk, start + count))
        seq = min(seq + chunk, start + count)
    }
}

if mode == "track" { trackPersisted(0..<(Int(options["--count"] ?? "") ?? 100)) }
while await !client.flush() {}
say("flushed")
client.shutdown()
exit(0)
