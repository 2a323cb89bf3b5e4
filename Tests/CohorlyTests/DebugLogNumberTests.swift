import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

/// The debug log's delays are rounded for a reader (issue 25): jitter made every retry line print a double's
/// digits (`retry in 0.04246912 s`).
struct DebugLogNumberTests {
    @Test func aRetryDelayIsPrintedRounded() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        collector.injectFault(Fault(status: 503), count: 1)
        let recorder = Recorder()
        // 50 ms with the jitter this number gives (1 + 0.2 · (2 · 0.123456 − 1)) is 42.469… ms.
        let client = makeClient(collector, recorder: recorder) { $0.retry.random = { 0.123456 } }
        defer { client.shutdown() }
        client.track("Delayed")
        #expect(await client.flush() == false)
        let line = recorder.lines.first { $0.contains("retry in") }
        #expect(line?.hasSuffix("record(s) kept, retry in 42 ms") == true, "\(recorder.lines)")
    }

    @Test func delaysReadAsMillisecondsOrSecondsWithOneDecimal() {
        #expect(LogDuration.text(0.04246912) == "42 ms")
        #expect(LogDuration.text(0.9996) == "1000 ms")
        #expect(LogDuration.text(2.345678) == "2.3 s")
        #expect(LogDuration.text(600) == "600.0 s")
    }
}
