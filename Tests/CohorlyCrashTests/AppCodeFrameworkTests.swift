import CohorlySymbols
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry
import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlyCrash

/// In-app is the app's code, not the executable (issue 38 part 2): an app (fixtures/inapp/App) depending on a
/// framework package by path (fixtures/inapp/Framework: a generic router calling the app through closures and
/// a protocol witness), both linked into one executable as SwiftPM links every server, crashes in its own
/// code. The device's event marks the app's frames in-app and the framework's, the compiler's thunks and the C
/// start-up code not; the issue key and culprit use the app's frames alone; PostHog's and Sentry's events say
/// the same; the collector naming the raw crash from the binary decides as the device did.
@Suite struct AppCodeFrameworkTests {
    @Test(arguments: ["debug", "release"]) func frameworkFramesAndThunksAreNotInApp(configuration: String) throws {
        let report = try FrameworkApp.crash(configuration)
        defer { try? FileManager.default.removeItem(atPath: FrameworkApp.root(configuration)) }
        let symbols = ExceptionBuilder.symbolicate(report)
        #expect(symbols.sourceRoot == FrameworkApp.root(configuration) + "/App", "\(symbols.sourceRoot ?? "nil")")
        let exception = ExceptionBuilder.exception(from: report, symbols: symbols)
        let frames = try #require(exception.subject?.logicalFrames)
        func described(_ frame: CapturedException.StackFrame) -> String {
            "\(frame.inApp ? "app" : "   ") \(frame.symbols.map { $0.function ?? "?" }.joined(separator: " <- "))"
        }
        let listing = frames.map(described).joined(separator: "\n")
        let executable = try #require(exception.images.first { $0.path == report.executable })
        func inExecutable(_ frame: CapturedException.StackFrame) -> Bool {
            executable.contains(frame.frame.address.value)
        }
        func physical(_ frame: CapturedException.StackFrame) -> FrameSymbol? { frame.symbols.last }
        func module(_ frame: CapturedException.StackFrame) -> String? {
            physical(frame)?.rawFunction.flatMap(SwiftMangling.module(of:))
        }
        func runsApp(_ frame: CapturedException.StackFrame) -> Bool {
            frame.symbols.contains { symbol in
                !AppCode.isCompilerMade(symbol.function ?? "") && (symbol.file ?? "").contains("/App/Sources/App/")
            }
        }
        // The app's functions are in-app: the crash site, the handler, its closure, top-level code.
        let app = frames.filter(runsApp)
        #expect(
            app.contains { $0.symbols.contains { $0.function?.contains("Catalog.price(of:") == true } }, "\(listing)")
        #expect(app.contains { $0.symbols.contains { $0.function?.contains("quote(") == true } }, "\(listing)")
        #expect(app.allSatisfy { $0.inApp }, "\(listing)")
        // The framework's functions (generic code of the router), compiler thunks and the C start-up code are
        // not, unless the app's code was inlined into them.
        let framework = frames.filter { module($0) == "Framework" && !runsApp($0) }
        let thunks = frames.filter { AppCode.isCompilerMade(physical($0)?.function ?? "") && !runsApp($0) }
        let startUp = frames.filter { AppCode.startUpFunctions.contains(physical($0)?.function ?? "") }
        #expect(!framework.isEmpty, "\(listing)")
        #expect(!startUp.isEmpty, "\(listing)")
        if configuration == "debug" {
            #expect(!thunks.isEmpty, "\(listing)")
            #expect(thunks.contains { physical($0)?.function?.hasPrefix("protocol witness for") == true }, "\(listing)")
        }
        #expect((framework + thunks + startUp).allSatisfy { !$0.inApp }, "\(listing)")
        // All in the executable (`_start` too): the image alone would call each of them the app's.
        #expect((app + framework + thunks).allSatisfy(inExecutable), "\(listing)")
        #expect(startUp.contains { inExecutable($0) && physical($0)?.function == "_start" }, "\(listing)")

        // PostHog's event and Sentry's say the same of every frame (their frames oldest first, inlined calls
        // their own frames).
        let record = ExceptionBuilder.record(exception)
        let posthog = record.event.properties["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]
        let posthogFrames = try #require(posthog?.arrayValue)
        let sentry = SentryEvent.value(
            record, configuration: try SentryConfiguration(dsn: "http://key@127.0.0.1:9/1"))
        let sentryFrames = try #require(
            sentry["exception"]?["values"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue)
        func inApp(_ frames: [CohorlyValue]) -> [String] {
            frames.map { "\($0["in_app"] == true ? "app" : "   ") \($0["function"]?.stringValue ?? "?")" }
        }
        #expect(inApp(posthogFrames).filter { $0.hasPrefix("app") }.count >= app.count)
        #expect(inApp(posthogFrames) == inApp(sentryFrames))
        let physicalWire = posthogFrames.filter { $0["inline"] != true }.reversed().map { $0["in_app"] == true }
        #expect(physicalWire == frames.map(\.inApp), "\(inApp(posthogFrames))")

        // The issue: its key and culprit are made of the app's frames only.
        let view = CapturedException.groupingView(exceptionEvent: .object(record.event.properties))
        let key = IssueKey(view, custom: nil)
        #expect(key.culprit.contains("Catalog.price(of:"), "\(key.culprit)")
        let keyed = view.frames.compactMap { $0.function }
        #expect(!keyed.isEmpty)
        // Each is a frame running the app's code (in release, the app's middleware inlined into its protocol
        // witness keys as the witness: the physical function).
        let appAddresses = Set(app.map(\.frame.address))
        #expect(view.frames.allSatisfy { appAddresses.contains($0.frame.address) }, "\(keyed)")
        #expect(view.frames.count == app.count, "\(keyed)")

        // The same crash sent raw (the device had no binary at hand): the collector names its frames from the
        // binary and decides in-app as the device did — the same key, the same culprit, the same marks on the
        // crash page.
        let raw = ExceptionBuilder.exception(from: report)
        #expect(raw.subject?.logicalFrames.filter(inExecutable).allSatisfy { $0.inApp } == true)
        let locator = DebugFileLocator(searchPaths: [], debugRoots: [], debuginfod: nil)
        let symbolicator = ImageSymbolicator(images: raw.images.map(LoadedImage.init(image:)), locator: locator)
        let rawKey = IssueKey(raw, custom: nil, symbolicator: symbolicator)
        #expect(rawKey.culprit == key.culprit)
        #expect(rawKey.fingerprint == key.fingerprint)
        let shown = CrashSymbolicator.symbolicate(raw, locator: locator)
        let thread = try #require(shown.threads.first { $0.crashed })
        #expect(thread.logicalFrames.map { $0.inAppAnswer ?? true } == frames.map(\.inApp), "\(listing)")
    }
}

/// The fixture app built with SwiftPM in a temporary directory (the app beside the framework, so the framework
/// is outside the root package's directory as a package dependency by path is), with the crash recorder's C
/// core copied in as a C target; run once per configuration.
enum FrameworkApp {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let swift = "/opt/swift/usr/bin/swift"

    /// The directory holding `App/` and `Framework/` for `configuration`.
    static func root(_ configuration: String) -> String {
        NSTemporaryDirectory() + "cohorly-inapp-\(getpid())-\(configuration)"
    }

    /// Builds the app in `configuration` (`debug`, `release` with `-g`), runs it, and reads the crash report it
    /// left.
    static func crash(_ configuration: String) throws -> CrashReport {
        let manager = FileManager.default
        let root = root(configuration)
        try? manager.removeItem(atPath: root)
        try manager.createDirectory(atPath: root, withIntermediateDirectories: true)
        let fixtures = repository.appendingPathComponent("fixtures/inapp")
        for package in ["App", "Framework"] {
            try manager.copyItem(atPath: fixtures.appendingPathComponent(package).path, toPath: root + "/" + package)
        }
        try manager.copyItem(
            atPath: repository.appendingPathComponent("Sources/CCrashRecorder").path,
            toPath: root + "/App/Sources/CRecorder")
        var arguments = ["build", "--package-path", root + "/App", "-c", configuration]
        if configuration == "release" { arguments += ["-Xswiftc", "-g"] }
        try FrameworkApp.run(swift, arguments, expecting: 0)
        let reports = root + "/reports"
        try manager.createDirectory(atPath: reports, withIntermediateDirectories: true)
        // The app dies of its force unwrap (SIGILL on x86-64, SIGTRAP on arm64).
        try FrameworkApp.run(root + "/App/.build/\(configuration)/App", [reports], expecting: nil)
        let files = try manager.contentsOfDirectory(atPath: reports).filter { $0.hasSuffix(".json") }
        let file = try #require(files.first, "no crash report in \(reports)")
        let report = try CrashReport.decode(Data(contentsOf: URL(fileURLWithPath: reports + "/" + file)))
        return report
    }

    /// Runs `executable`; `expecting` is the exit status it must end with (nil: it must die of a signal).
    private static func run(_ executable: String, _ arguments: [String], expecting: Int32?) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if let expecting {
            #expect(process.terminationReason == .exit && process.terminationStatus == expecting, "\(text)")
        } else {
            #expect(process.terminationReason == .uncaughtSignal, "\(text)")
        }
    }
}
