import Cohorly
import CCrashRecorder
import CohorlyCrash
import CrashDemoSupport
import Foundation

/// Breadcrumb scenarios: what the app did before the crash ends up in the report (needs the client).
enum BreadcrumbScenarios {
    static let names = [
        "tracks-then-crash", "breadcrumbs-then-crash", "huge-breadcrumbs", "breadcrumb-race", "breadcrumb-stalled",
    ]

    static func run(_ name: String, options: DemoOptions) -> Never {
        guard let cohorly = Cohorly.shared else { usage("scenario \(name) needs the client (not --recorder-only)") }
        switch name {
        case "tracks-then-crash":
            // `--tracks N` events named event-1…event-N, each with a few properties.
            for n in 1...max(1, options.tracks) {
                cohorly.track("event-\(n)", properties: ["n": .int(n), "screen": .string("screen-\(n)")])
            }
            say("tracked \(options.tracks)")
        case "breadcrumbs-then-crash":
            cohorly.identify("crumb-user")
            cohorly.alias("crumb-alias")
            cohorly.addBreadcrumb("cart opened", category: "ui", data: ["items": 3, "total": 9.5, "coupon": nil])
            var properties: Properties = [
                "cart": ["items": [1, 2, 3]], "long": .string(String(repeating: "x", count: 500)),
            ]
            for key in 0..<20 { properties["key-\(key)"] = .int(key) }
            cohorly.track("Checkout", properties: properties)
            cohorly.addBreadcrumb(String(repeating: "é", count: 300), category: String(repeating: "c", count: 40))
            cohorly.reset()
            say("anonymous id \(cohorly.currentDistinctId)")
        case "huge-breadcrumbs":
            // Every message escapes to six bytes a byte (control characters) and every data is far too large.
            let control = String(repeating: "\u{01}", count: 1_000)
            let big: Properties = ["blob": .string(String(repeating: "\u{02}", count: 1_000))]
            for n in 1...60 { cohorly.addBreadcrumb("huge-\(n)-" + control, data: big) }
        case "breadcrumb-race":
            race(cohorly)
        case "breadcrumb-stalled":
            // Five breadcrumbs, then a sixth whose writer stops halfway (holding the writers' lock) and a crash.
            for n in 1...5 { cohorly.addBreadcrumb("before-\(n)") }
            cly_test_stall_next_breadcrumb()
            Thread { cohorly.addBreadcrumb("stalled") }.start()
            let deadline = Date().addingTimeInterval(10)
            while !cly_test_breadcrumb_stalled() && Date() < deadline { usleep(1000) }
            say(cly_test_breadcrumb_stalled() ? "stalled" : "not stalled")
        default:
            usage("unknown scenario '\(name)'")
        }
        demo_null_write()
        exit(97)
    }

    /// Four threads add breadcrumbs (and track) as fast as they can while the main thread crashes.
    static func race(_ cohorly: Cohorly) {
        let running = DispatchSemaphore(value: 0)
        for worker in 0..<4 {
            Thread {
                var n = 0
                while true {
                    n += 1
                    if n % 2 == 0 {
                        cohorly.addBreadcrumb("w\(worker)-\(n)", data: ["worker": .int(worker), "n": .int(n)])
                    } else {
                        cohorly.track("w\(worker)-\(n)", properties: ["n": .int(n)])
                    }
                    if n == 2000 { running.signal() }
                }
            }.start()
        }
        for _ in 0..<4 { running.wait() }
    }
}
