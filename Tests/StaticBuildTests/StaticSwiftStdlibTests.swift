import CohorlyCollector
import Foundation
import TestWaiting
import Testing

/// A `--static-swift-stdlib` build (the Vapor and Hummingbird Dockerfiles' default) in a crash loop: its detached
/// senders, which run from a C constructor before the Swift runtime's own start-up, deliver and end.
@Suite struct StaticSwiftStdlibTests {
    /// Six launches, each crashing once it started its detached sender (a supervisor restarting a crashing
    /// service; no clean launch): each launch's sender sends the crash before it, so the first five crashes arrive,
    /// each once (the sixth waits for crash-time delivery or the next launch). Every sender ends within its
    /// timeout + 5 s and leaves `crash-sender.lock` free. (Before: every sender waited forever for a task that
    /// never ran, holding the lock, and none of the crashes arrived.)
    @Test func aCrashLoopIsReportedAndLeavesNoSenderBehind() async throws {
        let launches = try Launches(try await StaticBuild.staticSwiftStdlib.executable())
        defer { launches.finish() }
        let timeout = 10_000
        var crashes: [String] = []
        for index in 0..<6 {
            let go = launches.root.appendingPathComponent("go-\(index)")
            if index == 0 { #expect(FileManager.default.createFile(atPath: go.path, contents: nil)) }
            let (launch, _) = try launches.start(
                ["crash", "null-write", "--until", go.path], senderTimeoutMilliseconds: timeout)
            if index > 0 {
                // It crashes once it started its sender (at most 60 s: a safety net).
                _ = await eventually(timeout: 60) { Launches.hasStartedASender(launch.processIdentifier) }
                #expect(FileManager.default.createFile(atPath: go.path, contents: nil))
            }
            await waitForExit(launch)
            #expect(launch.terminationReason == .uncaughtSignal && launch.terminationStatus == SIGSEGV)
            crashes += launches.reportInsertIds().filter { !crashes.contains($0) }
        }
        let lastLaunchEnded = ContinuousClock.now
        #expect(crashes.count == 6, "\(crashes)")
        let delivered = await eventually(timeout: 60) { Set(launches.receivedInsertIds()) == Set(crashes.prefix(5)) }
        #expect(delivered, "received \(launches.receivedInsertIds()), crashes \(crashes)")
        #expect(launches.receivedInsertIds().count == 5)  // each once
        // Named: what a dying launch could not symbolicate, its sender did (it has the binary and the time).
        for functions in launches.crashedThreadFunctions() {
            #expect(functions.contains { $0.contains("demo_null_write") }, "\(functions)")
        }

        // No sender outlives its timeout + 5 s (the last one started before the last launch ended).
        let gone = await eventually(timeout: Double(timeout) / 1000 + 5) { launches.runningSenders().isEmpty }
        #expect(gone, "senders still running \(ContinuousClock.now - lastLaunchEnded) after the last launch")
        let lock = open(launches.storage.appendingPathComponent("crash-sender.lock").path, O_RDWR | O_CLOEXEC)
        defer { close(lock) }
        #expect(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
    }

    /// A tool that crashes once and is never launched again (a batch job, a Kubernetes Job): its crash-time sender —
    /// this static executable in sender mode, started by the crash handler — delivers the crash within seconds,
    /// symbolicated, and ends.
    @Test func aCrashWithNoLaterLaunchIsDeliveredByItsCrashTimeSenderNamed() async throws {
        let launches = try Launches(try await StaticBuild.staticSwiftStdlib.executable())
        defer { launches.finish() }
        let crash = try await launches.run(["crash", "null-write"], senderAtCrash: true)
        #expect(crash.signal == SIGSEGV, "\(crash)")
        // No other launch: only the crash's own sender can deliver it.
        #expect(await eventually(timeout: 30) { launches.receivedInsertIds().count == 1 })
        let functions = try #require(launches.crashedThreadFunctions().first)
        #expect(functions.contains { $0.contains("demo_null_write") }, "\(functions)")
        #expect(await eventually { launches.runningSenders().isEmpty && launches.reportInsertIds().isEmpty })
    }

    /// A destination that takes the connection and never answers: the sender still ends within its timeout + 5 s.
    /// (Before: a sender waited for the 30 s request timeout, then backed off and tried again until its timeout.)
    @Test func aSenderEndsInTimeWhateverTheDestinationDoes() async throws {
        var launches = try Launches(try await StaticBuild.staticSwiftStdlib.executable())
        defer { launches.finish() }
        let silent = try SilentListener()
        defer { silent.close() }
        launches.host = silent.url
        let first = try await launches.run(["crash", "null-write"])
        #expect(first.signal == SIGSEGV, "\(first)")
        #expect(launches.reportInsertIds().count == 1)

        let timeout = 2_000
        let go = launches.root.appendingPathComponent("go")
        let (second, _) = try launches.start(
            ["crash", "null-write", "--until", go.path], senderTimeoutMilliseconds: timeout)
        _ = await eventually(timeout: 60) { Launches.hasStartedASender(second.processIdentifier) }
        let senderStarted = ContinuousClock.now
        #expect(FileManager.default.createFile(atPath: go.path, contents: nil))
        await waitForExit(second)
        let gone = await eventually(timeout: Double(timeout) / 1000 + 5) { launches.runningSenders().isEmpty }
        #expect(gone, "a sender still runs \(ContinuousClock.now - senderStarted) after it started")
        #expect(silent.acceptedConnections() > 0)  // it did try
    }
}

/// A TCP listener on loopback that takes connections and never answers.
final class SilentListener: @unchecked Sendable {
    private let descriptor: Int32
    let url: URL

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 64) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard descriptor >= 0, bound else { throw POSIXError(.EADDRNOTAVAIL) }
        url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))") ?? URL(fileURLWithPath: "/")
    }

    /// Takes the connections waiting (never answering them) and returns how many there were.
    func acceptedConnections() -> Int {
        var count = 0
        var flags = fcntl(descriptor, F_GETFL)
        flags |= O_NONBLOCK
        _ = fcntl(descriptor, F_SETFL, flags)
        while case let connection = accept(descriptor, nil, nil), connection >= 0 {
            Glibc.close(connection)
            count += 1
        }
        return count
    }

    func close() { Glibc.close(descriptor) }
}
