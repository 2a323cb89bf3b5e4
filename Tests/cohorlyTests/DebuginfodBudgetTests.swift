import CohorlySymbols
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A debuginfod server that accepts connections and never answers costs a report at most the time budget in
/// total (libdebuginfod alone would wait 90 s per transfer), and the CLI says what it is fetching.
@Suite struct DebuginfodBudgetTests {
    /// A loopback TCP listener that never accepts nor answers: the kernel completes the handshakes of its
    /// backlog, so clients connect and then wait for an answer that never comes.
    final class SilentListener {
        let descriptor: Int32
        let port: UInt16

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard fd >= 0, bound == 0, listen(fd, 64) == 0 else {
                if fd >= 0 { close(fd) }
                throw CLIFixtureError(reason: "cannot listen: \(String(cString: strerror(errno)))")
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            descriptor = fd
            port = UInt16(bigEndian: address.sin_port)
        }

        deinit { close(descriptor) }
    }

    @Test func aSilentServerCostsAtMostTheBudget() throws {
        let fixtures = try CLIFixtures.get()
        let listener = try SilentListener()
        let codeId = try #require(try ObjectInfo(path: fixtures.path("shop")).codeId)
        // The report's modules are nowhere on this machine: both are asked of the server.
        let report = try fixtures.report().replacingOccurrences(
            of: fixtures.path("shop") + "\"", with: "/opt/gone/shop\"")
        let path = try SymbolicateCommandTests.temporary("silent-debuginfod.json", report)
        let cache = Scratch.path("silent-cache")
        try? FileManager.default.removeItem(atPath: cache)
        var environment = ProcessInfo.processInfo.environment
        environment["DEBUGINFOD_URLS"] = "http://127.0.0.1:\(listener.port)"
        environment["DEBUGINFOD_CACHE_PATH"] = cache
        environment["COHORLY_DEBUGINFOD_TIMEOUT"] = "1"
        let clock = ContinuousClock()
        let start = clock.now
        let result = try CLI.run(["symbolicate", path], environment: environment)
        let elapsed = clock.now - start
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("Crash: SIGILL: Illegal instruction at 0x"))
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines.first?.hasPrefix(
                "cohorly: fetching the debug file of build id \(codeId) from debuginfod (http://127.0.0.1:\(listener.port)), up to 1.0 s"
            ) == true, "\(result.stderr)")
        #expect(
            lines.contains(
                "cohorly: debuginfod: no more fetches, the time budget of 1.0 s is spent (COHORLY_DEBUGINFOD_TIMEOUT sets it)"
            ))
        // One fetch was tried; the second module was not asked once the budget was spent. The bound is
        // generous (libdebuginfod's own timeout is 90 s per transfer); the check is that it is not waited out.
        #expect(lines.filter { $0.hasPrefix("cohorly: fetching") }.count == 1)
        #expect(elapsed < .seconds(30))
    }
}
