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
    static func run(
        path: String, debugDirs: [String], json: Bool, names: Demangler.Style, showsAsyncCallers: Bool = true
    ) -> ExitStatus {
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
        let crashes = found.crashes.map { found in
            let (input, notes) = SymbolicateLimits.capped(found.input)
            for note in notes { Console.error("cohorly: \(note)") }
            return (header: found.header, crash: CrashSymbolicator.symbolicate(input, locator: locator))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let encoded =
                found.isList ? try? encoder.encode(crashes.map(\.crash)) : try? encoder.encode(crashes[0].crash)
            guard let data = encoded else { return .failure }
            Console.out(String(decoding: data, as: UTF8.self))
        } else {
            // Every frame: `symbolicate` is the full answer for a report (only `crashes show` and `issues show` fold
            // other code).
            let options = SymbolicatedCrash.TextOptions(
                names: names, missingDebugFilesAdvice: advice, showsAsyncCallers: showsAsyncCallers,
                foldsOtherCode: false)
            Console.out(crashes.map { $0.crash.text(header: $0.header, options: options) }.joined(separator: "\n\n"))
        }
        return .success
    }
}
