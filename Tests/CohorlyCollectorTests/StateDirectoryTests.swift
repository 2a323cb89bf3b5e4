import CohorlyCollector
import CohorlyFiles
import Foundation
import Testing

/// One default state directory for the client's queue, the recorder's reports and the collector's data, from
/// `XDG_STATE_HOME` or `HOME` (see CohorlyCrashTests' DefaultDirectoryTests for the app's side).
struct StateDirectoryTests {
    @Test func xdgStateHomeThenHomeThenThePasswordFile() {
        let both = ["XDG_STATE_HOME": "/x/state", "HOME": "/h"]
        #expect(StateDirectory.cohorly(environment: both) == "/x/state/cohorly")
        #expect(StateDirectory.cohorly("crashes", environment: both) == "/x/state/cohorly/crashes")
        #expect(
            StateDirectory.cohorly("collector", environment: ["HOME": "/h"]) == "/h/.local/state/cohorly/collector"
        )
        // The XDG rule: a relative XDG_STATE_HOME is ignored; so is a relative HOME.
        #expect(
            StateDirectory.cohorly(environment: ["XDG_STATE_HOME": "state", "HOME": "/h"])
                == "/h/.local/state/cohorly")
        let fallback = StateDirectory.cohorly(environment: ["HOME": "relative"])
        #expect(
            fallback.hasPrefix("/") && fallback.hasSuffix("/.local/state/cohorly") && !fallback.contains("relative"))
    }

    @Test func serveWithoutDataKeepsItsDatabaseUnderHome() async throws {
        let home = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let server = try await ServeCommandTests.Server([], environment: ["HOME": home.path])
        let stopped = await server.stop()
        #expect(stopped?.status == 0)
        let database = home.appendingPathComponent(".local/state/cohorly/collector/collector.sqlite")
        #expect(FileManager.default.fileExists(atPath: database.path))

        let state = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let other = try await ServeCommandTests.Server(
            [], environment: ["HOME": home.path, "XDG_STATE_HOME": state.path])
        #expect(await other.stop()?.status == 0)
        #expect(
            FileManager.default.fileExists(
                atPath: state.appendingPathComponent("cohorly/collector/collector.sqlite").path))
    }
}
