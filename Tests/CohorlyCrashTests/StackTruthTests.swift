import Cohorly
import CohorlyCollector
import CohorlySymbols
import Foundation
import TestWaiting
import Testing

/// What a printed stack shows is true and consistent, on a real crash of the debug CrashDemo (`fatal-error` on
/// the main thread: frames in libswiftCore, the app, libswift_Concurrency, libc and crt code):
/// - one naming style for every frame, whoever resolved it — the device (libswiftCore: the collector never
///   opens a system library) or the collector (the app, from its uploaded file): `swift-demangle --simplified`
///   by default, `swift-demangle --no-sugar` with `--no-sugar`;
/// - a frame shows `at file:line` exactly where llvm-symbolizer gives a line for its address; where it gives a
///   file with line 0 (a compile unit's name such as `crtstuff.c`) the frame shows no file.
@Suite struct StackTruthTests {
    static let cli = DemoBuild.debug.executable.deletingLastPathComponent().appendingPathComponent("cohorly").path
    static let swiftDemangle = "/opt/swift/usr/bin/swift-demangle"

    /// `swift-demangle --compact` with `option` for each name, in order.
    static func demangled(_ names: [String], _ option: String) async throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: swiftDemangle)
        process.arguments = [option, "--compact"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        let text = Data((names.joined(separator: "\n") + "\n").utf8)
        let data = try await offThePool {
            try process.run()
            input.fileHandleForWriting.write(text)
            try input.fileHandleForWriting.close()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }

    /// llvm-symbolizer's file and line in the physical function at `address` of `module` (`--inlines`: the last
    /// frame, whose location is where the outermost inlined call sits).
    static func reference(_ module: String, _ address: String) async throws -> (file: String, line: Int) {
        let result = try await SymbolicatedCrashTests.tool(
            ReferenceSymbolizer.executable.path, ["--inlines", "--obj=" + module, address])
        let lines = result.output.split(separator: "\n").map(String.init)
        let location = lines.count > 1 ? lines[lines.count - 1].split(separator: ":").map(String.init) : []
        return (location.first ?? "??", location.count > 1 ? Int(location[1]) ?? 0 : 0)
    }

    @Test func theStackIsOneNamingStyleAndShowsFilesOnlyWithLines() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let crash = try await setup.launch(["crash", "fatal-error"])
        let reportFile = try #require(crash.reportFiles.first)

        // Source locations, symbolicated here (system libraries opened where they are), against llvm-symbolizer.
        let json = try await SymbolicatedCrashTests.tool(Self.cli, ["symbolicate", reportFile.path, "--json"])
        let local = try JSONDecoder().decode(SymbolicatedCrash.self, from: Data(json.output.utf8))
        let text = try await SymbolicatedCrashTests.tool(Self.cli, ["symbolicate", reportFile.path, "--no-async"])
        let lines = text.output.split(separator: "\n").map(String.init)
        let thread = try #require(local.threads.first { $0.crashed })
        var lineless = 0
        for (index, frame) in thread.frames.enumerated() {
            guard let module = frame.lookup?.imagePath, let address = frame.lookup?.fileAddress.map(Address.init),
                let symbol = frame.symbols.last, let line = lines.first(where: { $0.hasPrefix("#\(index) ") })
            else { continue }
            let reference = try await Self.reference(module, address.description)
            if reference.line > 0 {
                #expect(
                    line.hasSuffix(" at \(reference.file):\(reference.line)")
                        || line.contains(
                            " at \(reference.file):\(reference.line):"),
                    "\(line) vs llvm-symbolizer \(reference)")
            } else {
                #expect(!line.contains(" at "), "\(line): llvm-symbolizer gives \(reference.file):0")
                if reference.file != "??" { lineless += 1 }
                #expect(symbol.file == (reference.file == "??" ? nil : reference.file))  // --json keeps it
            }
        }
        #expect(lineless > 0, "no frame with a file but no line (crtstuff.c) in \(lines)")
        #expect(!text.output.contains("crtstuff.c"))

        // The next launch sends the crash; the collector gets the app's debug file only.
        let next = try await setup.launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        let event = try #require(try await delivered { try setup.exceptions() }.first)
        let insertId = try #require(event.insertId)
        let host = setup.collector.baseURL.absoluteString
        let upload = try await SymbolicatedCrashTests.tool(
            Self.cli, ["debug-files", "upload", DemoBuild.debug.executable.path, "--release", "r@1", "--host", host])
        #expect(upload.status == 0, "\(upload.output)")

        let shownJSON = try await SymbolicatedCrashTests.tool(
            Self.cli, ["crashes", "show", insertId, "--host", host, "--json"])
        let answer = try #require(CohorlyValue(json: shownJSON.output)?["crash"]?.jsonString)
        let shown = try JSONDecoder().decode(SymbolicatedCrash.self, from: Data(answer.utf8))
        let frames = shown.threads.flatMap { $0.frames + ($0.async?.frames ?? []) }
        let symbols = frames.flatMap(\.symbols)
        // The device resolved libswiftCore's frames and sent their mangled names; the collector the app's. (Another
        // thread may be in the runtime's C++ code at the crash, a conformance lookup: those frames arrive named, with
        // no Swift linkage name to send.)
        let crashedFrames = shown.threads.first?.frames ?? []
        let core = frames.filter { $0.lookup?.imagePath?.hasSuffix("/libswiftCore.so") == true }.flatMap(\.symbols)
        let crashedInCore = crashedFrames.filter { $0.lookup?.imagePath?.hasSuffix("/libswiftCore.so") == true }
            .flatMap(\.symbols)
        #expect(
            !crashedInCore.isEmpty && crashedInCore.allSatisfy { $0.rawFunction.map(Demangler.isSwiftMangled) == true })
        #expect(core.allSatisfy { $0.function != nil && $0.rawFunction.map(Demangler.isSwiftMangled) ?? true })
        #expect(symbols.contains { $0.function?.hasPrefix("CrashDemo.crashFatalError()") == true })
        let mangled = Array(Set(symbols.compactMap(\.rawFunction).filter(Demangler.isSwiftMangled))).sorted()
        let simplified = try await Self.demangled(mangled, "--simplified")
        let full = try await Self.demangled(mangled, "--no-sugar")
        try #require(simplified.count == mangled.count && full.count == mangled.count)

        // Every frame (--all-frames): runs of the runtime's frames would otherwise fold into one line.
        let sugared = try await SymbolicatedCrashTests.tool(
            Self.cli, ["crashes", "show", insertId, "--host", host, "--all-frames"])
        let unsugared = try await SymbolicatedCrashTests.tool(
            Self.cli, ["crashes", "show", insertId, "--host", host, "--no-sugar", "--all-frames"])
        #expect(sugared.status == 0 && unsugared.status == 0)
        for (index, name) in mangled.enumerated() {
            // A closure of top-level code: `closure #1 in ` gets its module.
            let short = simplified[index].hasSuffix(" in ") ? simplified[index] + "CrashDemo" : simplified[index]
            #expect(sugared.output.contains(" " + short), "\(name): \(short) not in\n\(sugared.output)")
            if !short.contains(full[index]) {
                #expect(!sugared.output.contains(full[index]), "\(name): full \(full[index]) in the default text")
            }
            #expect(unsugared.output.contains(" " + full[index]), "\(name): \(full[index]) not in --no-sugar")
        }
        #expect(sugared.output.contains(" libswiftCore.so _assertionFailure(_:_:file:line:flags:)"))
        #expect(unsugared.output.contains(" libswiftCore.so Swift._assertionFailure(_: Swift.StaticString"))
        #expect(!sugared.output.contains(".o\n") && !sugared.output.contains("crtstuff.c"))
    }
}
