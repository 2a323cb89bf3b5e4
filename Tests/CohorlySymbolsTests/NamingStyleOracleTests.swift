import Foundation
import Testing

@testable import CohorlySymbols

/// The two naming styles against `swift-demangle` over every Swift function symbol of real binaries (libswiftCore
/// and the `shop` fixture): ``Demangler/Style/simplified`` is `swift-demangle --simplified`, and
/// ``Demangler/Style/full`` is `swift-demangle --no-sugar`, name for name.
@Suite struct NamingStyleOracleTests {
    static let swiftDemangle = "/opt/swift/usr/bin/swift-demangle"
    static let libswiftCore = "/opt/swift/usr/lib/swift/linux/libswiftCore.so"

    /// The Swift-mangled function symbols of `file` (`nm --defined-only`), each once.
    static func swiftFunctions(_ file: String) throws -> [String] {
        let output = try run("/usr/bin/nm", ["--defined-only", file])
        var seen = Set<String>()
        return output.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            guard parts.count == 3, "tTwW".contains(parts[1]), Demangler.isSwiftMangled(String(parts[2])) else {
                return nil
            }
            let name = String(parts[2])
            return seen.insert(name).inserted ? name : nil
        }
    }

    /// `swift-demangle --compact` with `options`, one readable name per mangled name (read from a file: a pipe
    /// written whole before the output is read would fill both ways).
    static func oracle(_ names: [String], _ options: [String]) throws -> [String] {
        let input = Scratch.path("names-\(UUID().uuidString)")
        try names.joined(separator: "\n").appending("\n").write(toFile: input, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: input) }
        let command = ([swiftDemangle] + options + ["--compact"]).joined(separator: " ") + " < " + input
        let output = try run("/bin/sh", ["-c", command])
        return output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Compares every name in both styles; returns the mismatches (mangled name, ours, the oracle's).
    static func mismatches(_ names: [String], style: Demangler.Style, oracle options: [String]) throws
        -> [(String, String, String)]
    {
        let expected = try oracle(names, options)
        #expect(expected.count == names.count)
        var found: [(String, String, String)] = []
        for (name, want) in zip(names, expected) {
            let ours = Demangler.name(function: Demangler.demangle(name), rawFunction: name, style: style) ?? ""
            // A closure of top-level code: `closure #1 in ` plus its module (see the test below).
            let context = want.hasSuffix(" in ") && ours.hasPrefix(want) ? ours.dropFirst(want.count) : ""
            if ours != want && (context.isEmpty || context.contains(" ")) { found.append((name, ours, want)) }
        }
        return found
    }

    @Test(arguments: ["libswiftCore", "shop_debug", "shop_release"])
    func bothStylesAreSwiftDemangles(binary: String) throws {
        let file = binary == "libswiftCore" ? Self.libswiftCore : try Fixtures.get().path(binary)
        let names = try Self.swiftFunctions(file)
        #expect(names.count > (binary == "libswiftCore" ? 10_000 : 20))
        let simplified = try Self.mismatches(names, style: .simplified, oracle: ["--simplified"])
        #expect(simplified.isEmpty, "\(simplified.count) of \(names.count): \(simplified.prefix(5))")
        let full = try Self.mismatches(names, style: .full, oracle: ["--no-sugar"])
        #expect(full.isEmpty, "\(full.count) of \(names.count): \(full.prefix(5))")
    }

    @Test func aClosureOfTopLevelCodeIsNamedWithItsModule() throws {
        let closure = "$s9CrashDemoyyYbcfU_"  // `{ … }` passed from CrashDemo's main.swift
        #expect(try Self.oracle([closure], ["--simplified"]) == ["closure #1 in "])
        #expect(Demangler.name(function: nil, rawFunction: closure, style: .simplified) == "closure #1 in CrashDemo")
        #expect(
            Demangler.name(function: nil, rawFunction: closure, style: .full)
                == "closure #1 @Sendable () -> () in CrashDemo")
        // A C++ or C name is the same in both styles.
        let cxx = "_ZN5swift34runJobInEstablishedExecutorContextEPNS_3JobE"
        for style in [Demangler.Style.simplified, .full] {
            #expect(
                Demangler.name(function: Demangler.demangle(cxx), rawFunction: cxx, style: style)
                    == "swift::runJobInEstablishedExecutorContext(swift::Job*)")
            #expect(
                Demangler.name(function: "swift_job_run", rawFunction: "swift_job_run", style: style) == "swift_job_run"
            )
        }
    }
}
