import Foundation
import Testing

/// Imports flow one way (docs/internals.md "Module map"), checked on the `import` lines of every source file:
///
/// 1. Each library module sits in a layer and imports only modules of lower layers (and the system and C
///    modules): the small pieces (HTTP client and server, compression, digests, the collector's API contract)
///    import none of Cohorly, CohorlyCollector or CohorlyCrash; no library imports an executable's module.
/// 2. CohorlyCollector is imported only by the CLI's `cohorly serve` code (Sources/cohorly/Serve*.swift), the
///    compliance adapter, the tests and the fuzz harnesses; its core only by the vendors' ingestion targets and
///    CohorlyCollector itself.
/// 3. The CLI does not import the analytics client (Cohorly) or the crash reporter (CohorlyCrash).
///
/// A new library module must be given a layer here; a file importing upwards fails with its path and line.
@Suite struct ModuleMapTests {
    /// Library modules by layer: a module may import modules of a lower layer only.
    static let layers: [String: Int] = [
        "CohorlyJSON": 1, "CohorlyFiles": 1, "CohorlyCompression": 1, "CohorlyDigests": 1, "CohorlyHTTPClient": 1,
        "CohorlySQLite": 2, "CohorlyCrashModel": 2, "CohorlyHTTPServer": 2, "CohorlyCollectorAPI": 2,
        "CohorlyLaunch": 2,
        "CohorlySymbols": 3, "CohorlyCollectorClient": 3,
        "CohorlyClient": 4, "CohorlyCommandLine": 4, "CohorlyUpload": 4,
        // Each destination's family sits on the client's core, beside (never importing) the others.
        "CohorlySentry": 5, "CohorlyPostHog": 5, "CohorlyCollectorCore": 5, "CohorlySentryUpload": 5,
        "CohorlyPostHogUpload": 5,
        "Cohorly": 6, "CohorlySentryIngestion": 6, "CohorlyPostHogIngestion": 6,
        "CohorlyCrash": 7, "CohorlyCollector": 7,
    ]
    /// The client's modules: the core, each destination's family and the facade.
    static let client = ["Cohorly", "CohorlyClient", "CohorlySentry", "CohorlyPostHog"]
    /// The small pieces below the client, the collector and the CLI.
    static let small = [
        "CohorlyHTTPClient", "CohorlyHTTPServer", "CohorlyCompression", "CohorlyDigests",
        "CohorlyCollectorAPI",
    ]
    /// Modules of the package's executables (their source directories' names).
    static let executables = [
        "cohorly", "cohorly_symbolicate", "CrashDemo", "PostHogComplianceAdapter", "CohorlyTestApp",
        "CohorlyCrashBench",
    ]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// (file path relative to the root, line number, imported module) for every Swift file under `directory`.
    static func imports(under directory: String) -> [(file: String, line: Int, module: String)] {
        let base = root.appendingPathComponent(directory)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var found: [(String, Int, String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let path = base.appendingPathComponent(relative).path
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if let module = importedModule(line) { found.append(("\(directory)/\(relative)", index + 1, module)) }
            }
        }
        return found
    }

    /// The module an `import` line names (`@testable`, `@_exported`, access levels and `import struct M.T`
    /// allowed), or nil for any other line.
    static func importedModule(_ line: Substring) -> String? {
        var words = line.split(separator: " ").map(String.init)
        while let first = words.first, first.hasPrefix("@") || ["public", "package", "internal"].contains(first) {
            words.removeFirst()
        }
        guard words.first == "import", words.count >= 2 else { return nil }
        var name = words[1]
        if ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"].contains(name), words.count >= 3 {
            name = words[2]
        }
        return name.split(separator: ".").first.map(String.init)
    }

    /// The library modules: every directory under Sources that is not an executable's.
    static var libraryModules: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path))
        return (names ?? []).filter { !executables.contains($0.replacingOccurrences(of: "-", with: "_")) }.sorted()
    }

    @Test func everySwiftLibraryModuleHasALayer() {
        // C targets and system-library module maps (CCurl, CZlib, …) are below every layer.
        let swiftModules = Self.libraryModules.filter { $0.hasPrefix("Cohorly") }
        #expect(swiftModules.count >= 14)
        for module in swiftModules {
            #expect(Self.layers[module] != nil, "\(module) has no layer in ModuleMapTests.layers")
        }
    }

    @Test func librariesImportOnlyLowerLayers() {
        for module in Self.libraryModules {
            guard let layer = Self.layers[module] else { continue }
            for (file, line, imported) in Self.imports(under: "Sources/\(module)") {
                #expect(
                    !Self.executables.contains(imported), "\(file):\(line): a library imports executable \(imported)")
                if let other = Self.layers[imported] {
                    #expect(
                        other < layer,
                        "\(file):\(line): \(module) (layer \(layer)) imports \(imported) (layer \(other))")
                }
            }
        }
    }

    @Test func theSmallPiecesImportNoneOfTheBigOnes() {
        for module in Self.small {
            let found = Self.imports(under: "Sources/\(module)")
            #expect(!found.isEmpty, "Sources/\(module) has no sources")
            for (file, line, imported) in found {
                #expect(
                    !(Self.client + ["CohorlyCollector", "CohorlyCrash"]).contains(imported),
                    "\(file):\(line): \(imported)")
            }
        }
    }

    @Test func theCollectorIsImportedOnlyByServeTheAdapterAndTests() {
        var everywhere: [(file: String, line: Int, module: String)] = []
        for directory in ["Sources", "Examples"] { everywhere += Self.imports(under: directory) }
        let importers = everywhere.filter { $0.module == "CohorlyCollector" }.map(\.file)
        for file in importers {
            let serve = file.hasPrefix("Sources/cohorly/Serve")
            let adapter = file.hasPrefix("Examples/PostHogComplianceAdapter/")
            #expect(serve || adapter, "\(file) imports CohorlyCollector")
        }
        let family = [
            "Sources/CohorlyCollector/", "Sources/CohorlySentryIngestion/", "Sources/CohorlyPostHogIngestion/",
        ]
        for (file, line, module) in everywhere where module == "CohorlyCollectorCore" {
            #expect(family.contains { file.hasPrefix($0) }, "\(file):\(line) imports CohorlyCollectorCore")
        }
        #expect(importers.contains { $0.hasPrefix("Sources/cohorly/Serve") }, "the rule found no serve code at all")
    }

    @Test func theCLIUsesNeitherTheAnalyticsClientNorTheCrashReporter() {
        let found = Self.imports(under: "Sources/cohorly")
        #expect(found.count > 50)
        for (file, line, imported) in found {
            #expect(
                !(Self.client + ["CohorlyCrash"]).contains(imported), "\(file):\(line): the CLI imports \(imported)")
        }
    }

    /// The client's core names no destination family's type (comments aside): each vendor's client side is its
    /// own target, restored through the facade's registry.
    @Test func theClientCoreNamesNoDestinationFamily() throws {
        let base = Self.root.appendingPathComponent("Sources/CohorlyClient")
        let files = try FileManager.default.contentsOfDirectory(atPath: base.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 40)
        let vendorType = try Regex(#"\b(Sentry|PostHog)[A-Z][A-Za-z]*"#)
        for file in files {
            let text = try String(contentsOfFile: base.appendingPathComponent(file).path, encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                #expect(
                    code.firstMatch(of: vendorType) == nil,
                    "Sources/CohorlyClient/\(file):\(index + 1) names a destination family's type")
            }
        }
    }

    @Test func theImportLineReaderReadsEveryForm() {
        #expect(Self.importedModule("import Foundation") == "Foundation")
        #expect(Self.importedModule("@testable import CohorlyCollector") == "CohorlyCollector")
        #expect(Self.importedModule("@_exported import CohorlyHTTPServer") == "CohorlyHTTPServer")
        #expect(Self.importedModule("    import Glibc") == "Glibc")
        #expect(Self.importedModule("package import struct CohorlyJSON.CohorlyValue") == "CohorlyJSON")
        #expect(Self.importedModule("// import Cohorly") == nil)
        #expect(Self.importedModule("let important = 1") == nil)
    }
}
