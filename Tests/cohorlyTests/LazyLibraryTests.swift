import CLibraryLoader
import Foundation
import Testing

/// libcurl, libmicrohttpd and libdebuginfod (and the TLS stacks behind them) are loaded on first use, not at
/// exec: commands that only read ELF files do not pay for them, and a missing library is an error message.
@Suite struct LazyLibraryTests {
    /// The shared libraries the dynamic loader opened for a run, from its `LD_DEBUG=files` trace.
    static func loadedLibraries(_ arguments: [String], environment extra: [String: String] = [:]) throws -> (
        libraries: Set<String>, result: CLI.Result
    ) {
        var environment = ProcessInfo.processInfo.environment
        environment["DEBUGINFOD_URLS"] = nil
        environment["LD_DEBUG"] = "files"
        environment.merge(extra) { $1 }
        let result = try CLI.run(arguments, environment: environment)
        var libraries: Set<String> = []
        for line in result.stderr.split(separator: "\n") {
            // "    1234:	file=libdw.so.1 [0];  needed by ./cohorly [0]" or "… dynamically loaded by …"
            guard let range = line.range(of: "file=") else { continue }
            let name = line[range.upperBound...].prefix { $0 != " " && $0 != "\t" && $0 != ";" }
            libraries.insert(String(name.split(separator: "/").last ?? name))
        }
        return (libraries, result)
    }

    @Test func offlineCommandsDoNotLoadNetworkLibraries() throws {
        let (libraries, result) = try Self.loadedLibraries(["debug-files", "check", CLI.path])
        #expect(result.status == 0)
        #expect(libraries.contains("libdw.so.1"), "the trace lists what was loaded: \(libraries.sorted())")
        for name in [
            "libcurl.so.4", "libmicrohttpd.so.12", "libdebuginfod.so.1", "libgnutls.so.30", "libssl.so.3",
            "libcrypto.so.3", "libzstd.so.1",
        ] {
            #expect(!libraries.contains(name), "\(name) was loaded by an offline command")
        }
    }

    @Test func debuginfodIsLoadedWhenAServerIsConfigured() throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("cohorly-debuginfod-\(UUID())")
        defer { try? FileManager.default.removeItem(at: cache) }
        // A closed port: the lookup fails fast, but only after libdebuginfod was loaded to try it.
        let (libraries, result) = try Self.loadedLibraries(
            ["debug-files", "find", String(repeating: "ab", count: 20)],
            environment: ["DEBUGINFOD_URLS": "http://127.0.0.1:9", "DEBUGINFOD_CACHE_PATH": cache.path])
        #expect(result.status == 1)
        #expect(libraries.contains("libdebuginfod.so.1"))
    }

    @Test func aMissingLibraryOrSymbolIsReportedNotFatal() {
        var slots = [UnsafeMutableRawPointer?](repeating: nil, count: 2)
        var error = [CChar](repeating: 0, count: 256)
        func load(_ soname: String, _ symbols: [String]) -> Int32 {
            let names = symbols.map { strdup($0) }
            defer { names.forEach { free($0) } }
            var pointers = names.map { UnsafePointer<CChar>($0) }
            return pointers.withUnsafeMutableBufferPointer { namesBuffer in
                slots.withUnsafeMutableBufferPointer { slotsBuffer in
                    cly_library_load(
                        soname, namesBuffer.baseAddress, slotsBuffer.baseAddress, symbols.count, &error, error.count)
                }
            }
        }
        func message() -> String {
            String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        #expect(load("libcohorly-no-such-library.so.7", ["zlibVersion"]) == 0)
        #expect(message().hasPrefix("libcohorly-no-such-library.so.7 could not be loaded: "))
        #expect(load("libz.so.1", ["zlibVersion", "cohorly_no_such_symbol"]) == 0)
        #expect(message() == "libz.so.1 has no cohorly_no_such_symbol")
        #expect(slots.allSatisfy { $0 == nil })
        #expect(load("libz.so.1", ["zlibVersion", "deflateInit2_"]) == 1)
        #expect(slots.allSatisfy { $0 != nil })
    }
}
