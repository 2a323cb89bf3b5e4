import Cohorly
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The web page's breadcrumbs table (issue 38 part 5): the crashing task's rows, which the event lists first, are
/// marked when other tasks added breadcrumbs too; breadcrumbs of one task (or of none) are not.
@Suite struct WebBreadcrumbTaskTests {
    static func crumb(_ message: String, task: Int?, crashing: Bool = false, sentry: Bool = false) -> CohorlyValue {
        var value: Properties = [
            "timestamp": "2026-12-06T06:00:00.000Z", "category": "request", "message": .string(message),
        ]
        var data: Properties = [:]
        if let task {
            if sentry {
                data["$task"] = .int(task)
                if crashing { data["$crashing_task"] = true }
            } else {
                value["task"] = .int(task)
                if crashing { value["crashing_task"] = true }
            }
        }
        value["data"] = .object(data)
        return .object(value)
    }

    @Test(arguments: [false, true]) func theCrashingTasksRowsAreMarked(sentry: Bool) {
        let crumbs = [
            Self.crumb("request 17 started", task: 7, crashing: true, sentry: sentry),
            Self.crumb("request 17 loaded", task: 7, crashing: true, sentry: sentry),
            Self.crumb("request 3 started", task: 9, sentry: sentry),
        ]
        let markup = Router.breadcrumbs(crumbs).markup
        #expect(markup.contains("The crashing task&#8217;s breadcrumbs first, marked."))
        let rows = markup.components(separatedBy: "<tr").dropFirst(2)  // the table's and the heading row's
        #expect(rows.map { $0.hasPrefix(" class=\"crashing-task\"") } == [true, true, false], "\(markup)")
    }

    @Test func breadcrumbsOfOneTaskAreNotMarked() {
        let crumbs = [Self.crumb("a", task: 7, crashing: true), Self.crumb("b", task: 7, crashing: true)]
        let markup = Router.breadcrumbs(crumbs).markup
        #expect(!markup.contains("crashing-task"))
        #expect(!markup.contains("The crashing task"))
    }
}
