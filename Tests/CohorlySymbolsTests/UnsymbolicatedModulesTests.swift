import CohorlyCrashModel
import CohorlySymbols
import Testing

/// "Unsymbolicated modules" names only the modules that left a frame unresolved: a module whose frames the crashed
/// device resolved needs no debug file here, and listing it (the app's own binary, libc) sent users looking for
/// files they did not need.
@Suite struct UnsymbolicatedModulesTests {
    @Test func onlyModulesWithAnUnresolvedFrameAreListed() {
        // Neither file exists here, so neither module opens; the device resolved the first one's frame.
        let symbol = FrameSymbol(function: "f()", file: "/src/f.swift", line: 3, column: 1, inlined: false)
        var exception = CapturedException(
            description: CrashDescription(type: "SIGSEGV", value: "", mechanism: "signal", issueName: nil),
            facts: CrashReason.Facts(), level: "fatal", handled: false)
        exception.threads = [
            CapturedException.Thread(
                tid: 1, name: "app", crashed: true,
                frames: [
                    CapturedException.StackFrame(Frame(0x10010, kind: .pc), symbols: [symbol]),
                    CapturedException.StackFrame(Frame(0x20010, kind: .returnAddress)),
                ])
        ]
        exception.images = [
            CapturedException.Image(path: "/no/such/dir/resolved", base: 0x10000, size: 0x1000, buildId: "01020304"),
            CapturedException.Image(path: "/no/such/dir/raw", base: 0x20000, size: 0x1000, buildId: "05060708"),
        ]
        let locator = DebugFileLocator(searchPaths: [], debugRoots: [], debuginfod: nil)
        let crash = CrashSymbolicator.symbolicate(exception, locator: locator)
        #expect(crash.threads.first?.frames.first?.symbols == [symbol])
        #expect(crash.unsymbolicatedModules.map(\.path) == ["/no/such/dir/raw"])
        let text = crash.text(header: [])
        #expect(text.contains("Unsymbolicated modules (no usable debug file found): /no/such/dir/raw ("), "\(text)")
        #expect(!text.contains("/no/such/dir/resolved"), "\(text)")
    }
}
