import Cohorly
import CohorlyCrash
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Issues from real crashes (issue 27 items 1 and 2): CrashDemo crashes made into their `$exception` events on
/// the device, sent to a collector over loopback, grouped and tracked through their states.
@Suite struct IssueGroupingTests {
    /// Real crash events, made once: two launches of one crash site, one of another.
    static let crashes = CrashEvents()

    @Test func theSameCrashTwiceIsOneIssueAndAnotherCrashIsAnother() async throws {
        let events = try await Self.crashes.events()
        let collector = try IssueCollector()
        #expect(collector.track(events.index1, insertId: "i1", distinctId: "alice", release: "1.0.0") == 200)
        #expect(collector.track(events.index2, insertId: "i2", distinctId: "bob", release: "1.1.0") == 200)
        #expect(collector.track(events.null, insertId: "n1", distinctId: "alice", release: "1.0.0") == 200)
        // Sent again (same insert id): deduplicated, not another occurrence.
        #expect(collector.track(events.index1, insertId: "i1", distinctId: "alice", release: "1.0.0") == 200)
        let issues = try collector.list()
        #expect(issues.count == 2, "\(issues)")
        let index = try #require(issues.first { $0["occurrences"] == 2 }, "\(issues)")
        let null = try #require(issues.first { $0["occurrences"] == 1 }, "\(issues)")
        #expect(index["users"] == 2)
        #expect(null["users"] == 1)
        #expect(index["first_release"] == "1.0.0")
        #expect(index["last_release"] == "1.1.0")
        #expect(index["state"] == "open")
        #expect(index["level"] == "fatal")
        #expect(index["title"] == "Fatal error", "\(index)")
        #expect(index["subtitle"] == "Index out of range", "\(index)")
        #expect(index["culprit"]?.stringValue?.contains("crashIndexOutOfRange") == true, "\(index)")
        #expect(null["culprit"]?.stringValue?.contains("demo_null_write") == true, "\(null)")
        // The page of one issue: counts per release and the latest occurrence symbolicated.
        let shown = try #require(collector.get("/api/issues/\(index["id"]?.intValue ?? 0)"))
        #expect(shown["per_release"] == [["release": "1.0.0", "count": 1], ["release": "1.1.0", "count": 1]])
        let frames = shown["latest"]?["crash"]?["threads"]?.arrayValue?.first?["frames"]?.arrayValue ?? []
        let names = frames.compactMap { $0["symbols"]?.arrayValue?.last?["function"]?.stringValue }
        #expect(names.contains { $0.contains("crashIndexOutOfRange") }, "\(names)")
        #expect(shown["latest"]?["insert_id"] == "i2")
    }

    /// Grouping reads an event's grouping view, not the whole model: on real crashes (symbolicated on the
    /// device, and raw) both give the same frames and the same key.
    @Test func theGroupingViewOfRealCrashesKeysThemAsTheWholeModelDoes() async throws {
        let events = try await Self.crashes.events()
        for (name, event) in [("index", events.index1), ("null", events.null), ("raw", events.rawIndex)] {
            let properties = CohorlyValue.object(event)
            let view = CapturedException.groupingView(exceptionEvent: properties)
            let full = CapturedException(exceptionEvent: properties)
            #expect(!view.frames.isEmpty, "\(name)")
            #expect(view.frames == full.groupingFrames(), "\(name)")
            #expect(IssueKey(view, custom: nil) == IssueKey(full, custom: nil), "\(name)")
        }
    }

    /// An uncaught C++ exception's stack starts in the crash recorder (its terminate hook and report writer,
    /// linked into the app): those frames are not in-app, so the culprit is the function that threw; an event of
    /// an earlier SDK, which marked them in-app, has the same key.
    @Test func anUncaughtCxxExceptionIsBlamedOnTheFunctionThatThrew() async throws {
        let events = try await Self.crashes.events()
        let view = CapturedException.groupingView(exceptionEvent: .object(events.cxx))
        let key = IssueKey(view, custom: nil)
        #expect(key.culprit.hasPrefix("demo::Widget<int>::explode("), "\(key.culprit)")
        #expect(key.title == "std::runtime_error", "\(key.title)")
        // The recorder's frames are in the event, named and not in-app.
        let frames = events.cxx["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
        let recorder = frames.indices.filter {
            frames[$0]["function"]?.stringValue.map(FrameSymbol.isCrashRecorderFunction) ?? false
        }
        #expect(recorder.count >= 2, "\(frames.map { $0["function"]?.stringValue ?? "?" })")
        #expect(recorder.allSatisfy { frames[$0]["in_app"] == false })
        // As an earlier SDK sent it: the same key.
        var earlier = frames
        for index in recorder {
            earlier[index] = .object((earlier[index].objectValue ?? [:]).merging(["in_app": true]) { $1 })
        }
        var exception = events.cxx["$exception_list"]?.arrayValue?.first?.objectValue ?? [:]
        var stacktrace = exception["stacktrace"]?.objectValue ?? [:]
        stacktrace["frames"] = .array(earlier)
        exception["stacktrace"] = .object(stacktrace)
        var old = events.cxx
        old["$exception_list"] = [.object(exception)]
        let oldView = CapturedException.groupingView(exceptionEvent: .object(old))
        #expect(oldView.frames.count == recorder.count + view.frames.count, "the recorder's frames were in-app")
        #expect(IssueKey(oldView, custom: nil) == key)
    }

    @Test func aCallerSuppliedFingerprintWins() async throws {
        let events = try await Self.crashes.events()
        let collector = try IssueCollector()
        var index = events.index1
        index["$exception_fingerprint"] = "checkout-declined"
        var null = events.null
        null["$exception_fingerprint"] = "checkout-declined"
        #expect(collector.track(index, insertId: "f1") == 200)
        #expect(collector.track(null, insertId: "f2") == 200)
        #expect(collector.track(events.index2, insertId: "f3") == 200)
        let issues = try collector.list()
        #expect(issues.count == 2, "\(issues)")
        let custom = try #require(issues.first { $0["fingerprint"] == "checkout-declined" }, "\(issues)")
        #expect(custom["occurrences"] == 2)
    }

    @Test func resolvedInAReleaseRegressesOnlyFromALaterOne() async throws {
        let events = try await Self.crashes.events()
        let collector = try IssueCollector()
        #expect(collector.track(events.index1, insertId: "r1", release: "1.9.0") == 200)
        let id = try #require(try collector.list().first?["id"]?.intValue)
        #expect(collector.post("/api/issues/\(id)/resolve", ["in_release": "1.9.0"]) == 200)
        // Same release, and an earlier one: stays resolved.
        #expect(collector.track(events.index2, insertId: "r2", release: "1.9.0") == 200)
        #expect(collector.track(events.index2, insertId: "r3", release: "1.8.5") == 200)
        #expect(try collector.issue(id)["state"] == "resolved")
        // 1.10.0 comes after 1.9.0 as a version (not as text).
        #expect(collector.track(events.index2, insertId: "r4", release: "1.10.0") == 200)
        let issue = try collector.issue(id)
        #expect(issue["state"] == "regressed")
        let transitions = try #require(collector.get("/api/issues/\(id)")?["transitions"]?.arrayValue)
        #expect(
            transitions.map { "\($0["from"]?.stringValue ?? "")>\($0["to"]?.stringValue ?? "")" }
                == ["open>resolved", "resolved>regressed"])
        #expect(transitions.last?["release"] == "1.10.0")
        #expect(transitions.allSatisfy { ($0["time"]?.intValue ?? 0) > 1_700_000_000 })
    }

    @Test func releasesThatAreNotVersionsCompareByArrival() async throws {
        let events = try await Self.crashes.events()
        let collector = try IssueCollector()
        #expect(collector.track(events.null, insertId: "a1", release: "nightly-b7f3") == 200)
        let id = try #require(try collector.list().first?["id"]?.intValue)
        // A release no occurrence had yet counts from the resolve.
        #expect(collector.post("/api/issues/\(id)/resolve", ["in_release": "nightly-0c21"]) == 200)
        #expect(collector.track(events.null, insertId: "a2", release: "nightly-b7f3") == 200)
        #expect(try collector.issue(id)["state"] == "resolved", "nightly-b7f3 arrived before the resolved one")
        #expect(collector.track(events.null, insertId: "a3", release: "nightly-01aa") == 200)
        #expect(try collector.issue(id)["state"] == "regressed", "nightly-01aa arrived after it")
    }

    @Test func aMuteForTwoOccurrencesEndsWithTheSecond() async throws {
        let events = try await Self.crashes.events()
        let collector = try IssueCollector()
        #expect(collector.track(events.null, insertId: "m1") == 200)
        let id = try #require(try collector.list().first?["id"]?.intValue)
        #expect(collector.post("/api/issues/\(id)/mute", ["occurrences": 2]) == 200)
        #expect(collector.track(events.null, insertId: "m2") == 200)
        let muted = try collector.issue(id)
        #expect(muted["state"] == "muted")
        #expect(muted["muted_for_occurrences"] == 1)
        #expect(collector.track(events.null, insertId: "m3") == 200)
        #expect(try collector.issue(id)["state"] == "open")
        #expect(collector.post("/api/issues/\(id)/mute", [:]) == 400)
        // An end far past any date is refused, not multiplied into milliseconds until it traps.
        #expect(collector.post("/api/issues/\(id)/mute", ["until": .int(Int.max)]) == 400)
        #expect(collector.post("/api/issues/\(id)/mute", ["until": .int(253_402_300_800)]) == 400)
        #expect(collector.post("/api/issues/999999/reopen", [:]) == 404)
    }

    @Test func uploadingTheBinaryMovesRawOccurrencesIntoTheirIssue() async throws {
        let events = try await Self.crashes.events()
        let collector = try IssueCollector()
        #expect(collector.track(events.index1, insertId: "s1") == 200)
        #expect(collector.track(events.rawIndex, insertId: "s2") == 200)
        // Raw frames are keyed by module offset: a different key until the collector can name them.
        #expect(try collector.list().count == 2)
        let executable = try #require(events.executable)
        let upload = sendTo(
            collector.collector, "PUT", "/api/debug-files/\(executable.buildId)/executable?release=1.0.0",
            body: try Array(Data(contentsOf: URL(fileURLWithPath: executable.path))))
        #expect(upload.status == 201, "\(upload.text)")
        let issues = try collector.list()
        #expect(issues.count == 1, "\(issues)")
        #expect(issues.first?["occurrences"] == 2)
        // A raw occurrence arriving now is named at once.
        #expect(collector.track(events.rawIndex, insertId: "s3") == 200)
        #expect(try collector.list().map { $0["occurrences"] } == [3])
    }
}
