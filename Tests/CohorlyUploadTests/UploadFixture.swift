import CohorlyCollector
import DebugFileFixtures
import Foundation

/// What the upload tests share beyond ``SplitProgram``: an independent implementation to check against, and a
/// collector on loopback.
enum UploadFixture {
    /// Runs `script` with Python 3 and `arguments`; its stdout.
    static func python(_ script: String, _ arguments: [String]) throws -> String {
        try SplitProgram.run("/usr/bin/python3", ["-c", script] + arguments)
    }

    /// A collector on an ephemeral loopback port, in memory, whose secret is `secret`.
    static func collector(secret: String) throws -> Collector {
        var configuration = CollectorConfiguration()
        configuration.adminToken = secret
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        return collector
    }
}
