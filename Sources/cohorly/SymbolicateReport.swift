import CohorlyCommandLine
import CohorlySymbols

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `cohorly symbolicate FILE.json`: a crash report or `$exception` event(s) (``SymbolicateInput``) printed like a
/// Swift backtrace, crash reason first. The symbolication and the rendering are the library's
/// (`CrashSymbolicator`), the same the collector uses for `cohorly crashes show`.
enum SymbolicateReport {
    /// What to do when frames stay raw or without lines.
    static let advice =
        "Hint: give the directory holding their debug files with --debug-dir DIR (system libraries: install their"
        + " -dbgsym packages into /usr/lib/debug), or upload them with `cohorly debug-files upload` and read the"
        + " crash with `cohorly crashes show`."

    /// Symbolicates the report or events in `path` (`-`: standard input).
    static func run(path: String, debugDirs: [String], json: Bool, names: Demangler.Style) -> ExitStatus {
        let found: (crashes: [SymbolicateInput.Crash], isList: Bool)
        do {
            found =
                path == "-"
                ? try SymbolicateInput.crashes(Console.readAll(), name: "standard input")
                : try SymbolicateInput.crashes(try readFile(path), name: path)
        } catch {
            Console.error("cohorly: \(error.reason)")
            return .failure
        }
        let locator = DebugFileLocator.cli(searchPaths: debugDirs)
        let crashes = found.crashes.map {
            (header: $0.header, crash: CrashSymbolicator.symbolicate($0.input, locator: locator))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let encoded =
                found.isList ? try? encoder.encode(crashes.map(\.crash)) : try? encoder.encode(crashes[0].crash)
            guard let data = encoded else { return .failure }
            Console.out(String(decoding: data, as: UTF8.self))
        } else {
            let options = SymbolicatedCrash.TextOptions(names: names, missingDebugFilesAdvice: advice)
            Console.out(crashes.map { $0.crash.text(header: $0.header, options: options) }.joined(separator: "\n\n"))
        }
        return .success
    }

    /// The report's crash as the library's neutral input.
    static func input(_ report: ReportInput) -> CrashInput {
        let images = (report.modules ?? []).compactMap { module -> LoadedImage? in
            guard let base = Hex.parse(module.base), let size = Hex.parse(module.size) else { return nil }
            let buildId = module.buildId.flatMap { $0.isEmpty ? nil : DebugId.buildId(hex: $0) }
            return LoadedImage(path: module.path, base: base, size: size, buildId: buildId)
        }
        func thread(_ thread: ReportInput.Thread, crashed: Bool) -> CrashInput.Thread {
            CrashInput.Thread(
                tid: thread.tid, name: thread.name, crashed: crashed || thread.crashed == true,
                truncated: thread.truncated == true, addresses: thread.frames.compactMap(Hex.parse))
        }
        var threads = report.crashedThread.map { [thread($0, crashed: true)] } ?? []
        threads += (report.threads ?? []).map { thread($0, crashed: false) }
        var input = CrashInput(threads: threads, images: images)
        input.message = report.message
        input.cxxType = report.cxx.map { $0.type ?? "of unknown type" }
        input.cxxWhat = report.cxx?.what
        input.signalName = report.signal?.name
        input.signalNumber = report.signal?.number
        input.signalCode = report.signal?.code
        input.faultAddress = report.signal?.address
        input.mechanism = report.mechanism
        input.executable = report.executable
        input.complete = report.complete != false
        return input
    }
}
