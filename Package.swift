// swift-tools-version:6.0
// Cohorly for Linux: crash capture, delivery and symbolication for Swift apps.
// Layout and import rules: see docs/internals.md ("Layout") — imports flow one way.
import PackageDescription

let package = Package(
    name: "Cohorly",
    products: [
        .library(name: "CohorlyCrash", targets: ["CohorlyCrash"]),
        .executable(name: "CrashDemo", targets: ["CrashDemo"]),
        .library(name: "Cohorly", targets: ["Cohorly"]),
        .library(name: "CohorlyCollector", targets: ["CohorlyCollector"]),
        .library(name: "CohorlySymbols", targets: ["CohorlySymbols"]),
        .executable(name: "cohorly", targets: ["cohorly"]),
        .executable(name: "cohorly-symbolicate", targets: ["cohorly-symbolicate"]),
        .executable(name: "posthog-compliance-adapter", targets: ["PostHogComplianceAdapter"]),
    ],
    targets: [
        // libunwind headers only. The library itself is never linked: Debian's libunwind.so.8 exports
        // `_Unwind_*` and would take over C++ exception handling for the whole process, so the recorder
        // loads it privately with dlopen(RTLD_LOCAL) at install time (see cly_unwind.c).
        .systemLibrary(
            name: "CUnwind",
            path: "Sources/CUnwind",
            providers: [.apt(["libunwind-dev"])]
        ),
        // The async-signal-safe crash core: handlers, unwinding, the report writer (C, plus one C++ file for the
        // terminate hook).
        .target(
            name: "CCrashRecorder",
            dependencies: ["CUnwind"],
            cSettings: [.define("_GNU_SOURCE")],
            linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("stdc++")]
        ),
        // The crash reporter: `CohorlyCrash.install`, the report store, the launch marker, crash, hang and
        // handled-error events (symbolicated on the device at the next launch with CohorlySymbols), the sender.
        .target(
            name: "CohorlyCrash",
            dependencies: [
                "CCrashRecorder", "Cohorly", "CohorlyFiles", "CohorlyLaunch", "CohorlySymbols", "CohorlyCrashModel",
            ]),
        // CrashDemo's C and C++ ways to crash (the Swift ways live in Swift).
        .target(
            name: "CrashDemoSupport", dependencies: ["CCrashRecorder"], path: "Examples/CrashDemoSupport",
            linkerSettings: [.linkedLibrary("dl")]),
        // Crashes on demand, in every supported way (also the crash matrix's child process).
        .executableTarget(
            name: "CrashDemo",
            dependencies: ["CohorlyCrash", "CCrashRecorder", "CrashDemoSupport"],
            path: "Examples/CrashDemo"
        ),
        // The crash reporter end to end: real crashing CrashDemo processes, their events, the collector, the CLI.
        .testTarget(
            name: "CohorlyCrashTests",
            dependencies: [
                "CohorlyCrash", "CrashDemo", "CohorlyCollector", "CohorlyCollectorCore", "CohorlySymbols", "cohorly",
                "TestWaiting", "CohorlyLaunch", "Cohorly", "CohorlyClient", "CohorlySentry", "CohorlyPostHog",
            ]),
        // libcurl (libcurl4-openssl-dev), libmicrohttpd (libmicrohttpd-dev) and libdebuginfod (libdebuginfod-dev)
        // are loaded with dlopen on first use, not linked: together they pull ~30 libraries into every process
        // at exec. Each wrapper target compiles against the library's header and calls it through
        // CLibraryLoader (see cly_library_loader.h).
        // dlopen/dlsym of those libraries on first use, with an error naming what is missing.
        .target(name: "CLibraryLoader", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CCurl", dependencies: ["CLibraryLoader"]),
        .target(name: "CMicroHTTPD", dependencies: ["CLibraryLoader"]),
        .target(name: "CDebuginfod", dependencies: ["CLibraryLoader"]),
        // SQLite's header and library (libsqlite3-dev).
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Private files and directories (0600 / 0700 whatever the umask) for everything that holds user data.
        .target(name: "CohorlyFiles"),
        // The launch protocol's locks and states, below the client and the crash recorder (docs/internals.md).
        .target(name: "CohorlyLaunch", dependencies: ["CohorlyFiles"]),
        // One JSON value with its parser and writer, shared below the client, the collector and the CLI.
        .target(name: "CohorlyJSON"),
        // The crash, owned once (Foundation-free, so the lean symbolicator can use it): frames with their kinds,
        // the report read (formats v1 and v2) and written, the crash reason, the exception event before any wire.
        .target(name: "CohorlyCrashModel", dependencies: ["CohorlyJSON"]),
        // The client's startup hooks: the crash recorder, when linked, takes its disk reserve before the queue opens.
        .target(name: "CStartupHooks"),
        // The SQLite wrapper shared by the client's queue and the collector's storage.
        .target(name: "CohorlySQLite", dependencies: ["CSQLite", "CohorlyFiles"]),
        // The client's core: `Cohorly.initialize`, the SQLite (WAL) queue, delivery and the retry contract, the
        // `Destination` seam and the Cohorly API's destination. It names no other destination.
        .target(
            name: "CohorlyClient",
            dependencies: [
                "CohorlyHTTPClient", "CSQLite", "CohorlyCompression", "CohorlyJSON", "CohorlySQLite", "CohorlyFiles",
                "CohorlyCrashModel", "CohorlyLaunch", "CStartupHooks",
            ]),
        // Sentry's destination: envelopes, events, release-health sessions, `Cohorly.initialize(sentry:)`.
        .target(
            name: "CohorlySentry",
            dependencies: ["CohorlyClient", "CohorlyCompression", "CohorlyCrashModel", "CohorlyLaunch"]),
        // PostHog's destination: capture V1 and the legacy `/batch`, flags, `Cohorly.initialize(posthog:)`.
        .target(name: "CohorlyPostHog", dependencies: ["CohorlyClient", "CohorlyCompression", "CohorlyCrashModel"]),
        // The client as apps import it: re-exports the core and every destination, and holds the one registry
        // that restores a queue's destination for the detached crash sender.
        .target(name: "Cohorly", dependencies: ["CohorlyClient", "CohorlySentry", "CohorlyPostHog"]),
        // Small pieces below the client, the collector and the CLI (docs/internals.md "Module map"): they import
        // none of Cohorly, CohorlyCollector or CohorlyCrash (ModuleMapTests checks it).
        // The HTTP client: the `Transport` seam and libcurl's transport (re-exported by Cohorly).
        .target(name: "CohorlyHTTPClient", dependencies: ["CCurl"]),
        // A small HTTP/1.1 server on libmicrohttpd (the collector's, the compliance adapter's, the test mocks'):
        // header deadline, connection cap, Host/Origin policy, request log.
        .target(name: "CohorlyHTTPServer", dependencies: ["CMicroHTTPD", "CohorlyJSON"]),
        // zlib's header and library (zlib1g-dev).
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // zlib streams (compressed uploads deflated by the CLI, inflated by the collector) and one-shot gzip.
        .target(name: "CohorlyCompression", dependencies: ["CZlib"]),
        // Digests from libraries: SHA-1/256/512 from libcrypto (loaded on first use), CRC-32 from zlib.
        .target(name: "CohorlyDigests", dependencies: ["CCrypto", "CZlib"]),
        // The collector's HTTP API contract, shared by the collector and the CLI: flag definitions, debug-file
        // kinds, query limits.
        .target(name: "CohorlyCollectorAPI", dependencies: ["CohorlyJSON", "CohorlyDigests"]),
        // The local collector's core, naming no vendor: routes, SQLite storage, issues, web pages, the read and
        // admin API, fault injection, on CohorlyHTTPServer; vendors' wires enter through `IngestionWire`.
        .target(
            name: "CohorlyCollectorCore",
            dependencies: [
                "CohorlyHTTPServer", "CohorlyCollectorAPI", "CohorlyCompression", "CohorlyDigests", "CSQLite",
                "CohorlyJSON", "CohorlySQLite", "CohorlySymbols", "CohorlyCrashModel", "CohorlyFiles", "CCrypto",
            ]),
        // Sentry's wires on the collector: envelopes (events, release-health sessions), the debug-file chunk upload.
        .target(
            name: "CohorlySentryIngestion",
            dependencies: [
                "CohorlyCollectorCore", "CohorlyCompression", "CohorlyDigests", "CohorlyFiles", "CohorlySymbols",
                "CohorlyCrashModel",
            ]),
        // PostHog's wires on the collector: capture V1, the legacy `/batch` wire, the flags request.
        .target(name: "CohorlyPostHogIngestion", dependencies: ["CohorlyCollectorCore"]),
        // The collector with every vendor's wire registered (`CollectorWires`), re-exporting the three.
        .target(
            name: "CohorlyCollector",
            dependencies: ["CohorlyCollectorCore", "CohorlySentryIngestion", "CohorlyPostHogIngestion"]),
        // elfutils libelf + libdw (0.188 on Debian 12); the shim also declares swift_demangle and
        // __cxa_demangle (module map links dw, elf, stdc++, and
        // lzma, bz2, z for libdw.a in a -static-executable build).
        .systemLibrary(
            name: "CDwarf",
            path: "Sources/CDwarf",
            pkgConfig: "libdw",
            providers: [.apt(["libdw-dev", "libelf-dev"])]
        ),
        // ELF ids and features, debug-file lookup, DWARF symbolication, demangling.
        .target(
            name: "CohorlySymbols",
            dependencies: ["CDwarf", "CDebuginfod", "CohorlyCrashModel", "CohorlyDigests", "CZlib", "CZstd"],
            linkerSettings: [.linkedLibrary("stdc++")]),
        // libzstd (libzstd-dev) and libcrypto (libssl-dev, for SHA-512): the PostHog symbol-set upload
        // (`debug-files upload --to posthog`); libzstd also for zstd-compressed debug sections. Loaded with dlopen on
        // first use like libcurl: linked, they cost every CLI start about 1.2 million cycles in the dynamic loader
        // (LD_DEBUG=statistics: 1.6-2.0 → 3.0 M).
        .target(name: "CZstd", dependencies: ["CLibraryLoader"]),
        .target(name: "CCrypto", dependencies: ["CLibraryLoader"]),
        // The CLI's client of the collector's API: the secret's handshake (the server proves it holds it; each
        // request carries an HMAC bound to its Host) and the collector's address with the messages that say how to
        // fix it.
        .target(
            name: "CohorlyCollectorClient", dependencies: ["CohorlyCollectorAPI", "CohorlyHTTPClient", "CohorlyJSON"]),
        // `debug-files upload`, whatever the destination: the seam (`DebugFileUploadDestination`), the survey of the
        // paths (ELF files, their kinds), the run's results, the streaming deflated PUT, and our collector's upload.
        .target(
            name: "CohorlyUpload",
            dependencies: [
                "CohorlyCollectorClient", "CohorlyCollectorAPI", "CohorlyHTTPClient", "CohorlyCompression",
                "CohorlyDigests", "CohorlyJSON", "CohorlySymbols", "CCurl",
            ]),
        // Sentry's debug-file upload (`--to sentry`): the chunk-upload API, files hashed in chunks, assembling and
        // polling, as sentry-cli does.
        .target(
            name: "CohorlySentryUpload",
            dependencies: [
                "CohorlyUpload", "CohorlyHTTPClient", "CohorlyCompression", "CohorlyDigests", "CohorlyJSON",
                "CohorlySymbols",
            ]),
        // PostHog's debug-file upload (`--to posthog`): symbol sets (ZIP, zstd, PostHog's header) through the
        // symbol-set API.
        .target(
            name: "CohorlyPostHogUpload",
            dependencies: [
                "CohorlyUpload", "CohorlyHTTPClient", "CohorlyCompression", "CohorlyDigests", "CohorlyJSON",
                "CohorlySymbols",
                "CZstd",
            ]),
        // The CLI: parsing and printing on top of the libraries; CohorlyCollector only for `cohorly serve`. It
        // depends on `cohorly-symbolicate` only so that building `cohorly` builds it too (it is not linked):
        // `symbolicate --exe` execs it when it sits beside.
        .executableTarget(
            name: "cohorly",
            dependencies: [
                "CohorlyCollector", "CohorlyCollectorAPI", "CohorlyCollectorClient", "CohorlyHTTPClient",
                "CohorlyCompression", "CohorlyDigests", "CohorlyJSON", "CohorlySymbols", "CohorlyCrashModel",
                "CohorlyCommandLine", "CohorlyUpload", "CohorlySentryUpload", "CohorlyPostHogUpload",
                "cohorly-symbolicate",
            ]),
        // Argument parsing, console output and `symbolicate --exe`, without Foundation (imports: CohorlySymbols and
        // the C library only), shared by `cohorly` and the lean `cohorly-symbolicate`, which links nothing else:
        // a Swift executable with Foundation is resident at ~13 MB before any work, one without at ~8.5 MB.
        .target(name: "CohorlyCommandLine", dependencies: ["CohorlySymbols"]),
        // The lean symbolicator `symbolicate --exe` hands over to. The Swift runtime is linked statically into it
        // in every build: loaded as shared libraries (libswiftCore alone is 4.5 MB resident, the implicitly linked
        // concurrency, regex and dispatch libraries 2 MB more) it would hold more than the work does. An unsafe
        // flag: only the CLI's products carry it, so packages depending on the libraries are not affected.
        .executableTarget(
            name: "cohorly-symbolicate", dependencies: ["CohorlyCommandLine"],
            linkerSettings: [.unsafeFlags(["-static-stdlib"])]),
        // A small app the client tests spawn (and kill -9) as a real process.
        .executableTarget(name: "CohorlyTestApp", dependencies: ["Cohorly"], path: "Tests/CohorlyTestApp"),
        // `scripts/bench-errors`: handled errors' cost on the caller (a benchmark, not a test).
        .executableTarget(
            name: "CohorlyCrashBench", dependencies: ["CohorlyCrash", "Cohorly"], path: "Tests/CohorlyCrashBench"),
        // PostHog's SDK test harness drives this HTTP adapter around the client (docs/posthog.md "The compliance
        // adapter").
        .executableTarget(
            name: "PostHogComplianceAdapter", dependencies: ["Cohorly", "CohorlyHTTPServer", "CohorlyCompression"],
            path: "Examples/PostHogComplianceAdapter"),
        // Waits for the tests that do not hold a thread of the test process's small cooperative pool; fixtures
        // shared by test targets (TwoAppCrashes).
        .target(name: "TestWaiting", dependencies: ["CohorlyJSON"], path: "Tests/TestWaiting"),
        // A small C program built with DWARF, stripped and split as a release pipeline does: the debug files the
        // collector's and the upload libraries' tests upload.
        .target(name: "DebugFileFixtures", path: "Tests/DebugFileFixtures"),
        // The client: its destinations against loopback mocks and the collector, a killed app, the retry contract.
        .testTarget(
            name: "CohorlyTests",
            dependencies: [
                "Cohorly", "CohorlyClient", "CohorlySentry", "CohorlyPostHog", "CohorlyCollector", "CohorlyHTTPServer",
                "CohorlyCompression", "CohorlyTestApp", "PostHogComplianceAdapter", "TestWaiting",
            ]),
        // The collector over loopback: ingestion, storage, issues, web pages, uploads (through the `cohorly` CLI).
        .testTarget(
            name: "CohorlyCollectorTests",
            dependencies: [
                "CohorlyCollector", "CohorlyCollectorCore", "CohorlySentryIngestion", "CohorlyPostHogIngestion",
                "Cohorly", "CohorlyClient", "cohorly", "CohorlyCompression", "CohorlyDigests", "CZstd", "CCrypto",
                "TestWaiting", "DebugFileFixtures",
            ]),
        // Symbolication against llvm-symbolizer on fixtures the tests compile; ELF ids against readelf.
        .testTarget(name: "CohorlySymbolsTests", dependencies: ["CohorlySymbols", "CohorlyCrashModel"]),
        // Digests against published test vectors.
        .testTarget(name: "CohorlyDigestsTests", dependencies: ["CohorlyDigests"]),
        // Reads Package.swift and the sources: imports flow one way (docs/internals.md "Module map").
        .testTarget(name: "ModuleMapTests"),
        // The crash model: reports v1/v2, frames and their kinds, the `$exception` writer and reader.
        .testTarget(name: "CohorlyCrashModelTests", dependencies: ["CohorlyCrashModel"]),
        // Private files under any umask, the state directory's fallbacks.
        .testTarget(name: "CohorlyFilesTests", dependencies: ["CohorlyFiles", "CohorlySQLite"]),
        // The `cohorly` CLI as a process: help, usage errors, symbolicate, debug-files, special files.
        .testTarget(name: "cohorlyTests", dependencies: ["cohorly", "CohorlySymbols", "CohorlyCommandLine"]),
        // The CLI's option tables: parsing, usage errors, suggestions, help rendering, bash completion.
        .testTarget(name: "CohorlyCommandLineTests", dependencies: ["CohorlyCommandLine"]),
        // CrashDemo built --static-swift-stdlib and -static-executable, each once, into its own scratch path under
        // .build (slow: a target of its own), run against a loopback collector.
        .testTarget(name: "StaticBuildTests", dependencies: ["CohorlyCollector", "CohorlyJSON", "TestWaiting"]),
        // One test target per shared module: JSON, HTTP server, HTTP client, compression, SQLite, the API contract.
        .testTarget(name: "CohorlyJSONTests", dependencies: ["CohorlyJSON"]),
        .testTarget(name: "CohorlyHTTPServerTests", dependencies: ["CohorlyHTTPServer", "CohorlyJSON"]),
        .testTarget(name: "CohorlyHTTPClientTests", dependencies: ["CohorlyHTTPClient", "CohorlyHTTPServer"]),
        .testTarget(name: "CohorlyCompressionTests", dependencies: ["CohorlyCompression"]),
        .testTarget(name: "CohorlySQLiteTests", dependencies: ["CohorlySQLite"]),
        .testTarget(name: "CohorlyCollectorAPITests", dependencies: ["CohorlyCollectorAPI", "CohorlyJSON"]),
        // The debug-file upload libraries in process: the survey, our collector's check and upload and Sentry's
        // chunk upload against the collector over loopback, Sentry's chunk plan and PostHog's symbol set against
        // independent tools (Python's hashlib and zipfile, the zstd program).
        .testTarget(
            name: "CohorlyUploadTests",
            dependencies: [
                "CohorlyUpload", "CohorlySentryUpload", "CohorlyPostHogUpload", "CohorlyCollector", "DebugFileFixtures",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
