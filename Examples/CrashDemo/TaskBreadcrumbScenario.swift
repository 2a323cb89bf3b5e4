import Cohorly
import CohorlyCrash
import CrashDemoSupport
import Foundation
import Synchronization

/// Scenario `task-breadcrumbs`: a server's 24 concurrent requests, each a child task of one task group running
/// in its own context (`request_id` = `req-N`), each adding two breadcrumbs; request 17 waits until every request
/// added both, then force-unwraps a missing dictionary entry. The crash's breadcrumbs are interleaved; the
/// crashing task's are two of 48.
enum TaskBreadcrumbScenario {
    static let requests = 24
    static let crashing = 17
    private static let added = Atomic<Int>(0)

    static func run() -> Never {
        guard let cohorly = Cohorly.shared else { usage("no client") }
        Task.detached { await serve(cohorly) }
        while true { sleep(60) }  // the crash ends the process
    }

    static func serve(_ cohorly: Cohorly) async {
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<requests {
                group.addTask {
                    await CohorlyCrash.withContext(["request_id": "req-\(index)"]) { await handle(index, cohorly) }
                }
            }
        }
    }

    @inline(never)
    static func handle(_ index: Int, _ cohorly: Cohorly) async {
        cohorly.addBreadcrumb("request \(index) started", category: "request")
        await Task.yield()
        cohorly.addBreadcrumb("request \(index) loaded", category: "request")
        added.add(1, ordering: .sequentiallyConsistent)
        guard index == crashing else { return }
        while added.load(ordering: .sequentiallyConsistent) < requests { await Task.yield() }
        let prices: [String: Int] = ["coffee": 3]
        say("crashing in request \(index)")
        _ = prices["missing-\(demo_identity(index))"]! + 1
    }
}
