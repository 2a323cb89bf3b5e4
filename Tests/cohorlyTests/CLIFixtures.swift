import CohorlySymbols
import Foundation

/// Binaries the CLI tests run against, compiled once per test process from `fixtures/symbols/`:
/// `shop` (Swift, -O -g), `shop.stripped` + `shop.debug` (debuglink), `inline` (C, -O2 -g, build id).
struct CLIFixtures: Sendable {
    let directory: String

    static let repository: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    static let shared: Result<CLIFixtures, CLIFixtureError> = {
        do { return .success(try build()) } catch let error as CLIFixtureError {
            return .failure(error)
        } catch {
            return .failure(CLIFixtureError(reason: "\(error)"))
        }
    }()

    static func get() throws -> CLIFixtures { try shared.get() }

    func path(_ name: String) -> String { directory + "/" + name }

    private static func build() throws -> CLIFixtures {
        let directory = Scratch.path("fixtures")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fixtures = CLIFixtures(directory: directory)
        let sources = repository + "/fixtures/symbols"
        let shop = fixtures.path("shop")
        try tool(
            "/opt/swift/usr/bin/swiftc",
            ["-O", "-g", "-module-name", "shop", sources + "/shop.swift", "-o", shop])
        try tool("/usr/bin/objcopy", ["--only-keep-debug", shop, shop + ".debug"])
        try tool(
            "/usr/bin/objcopy",
            ["--strip-all", "--add-gnu-debuglink=" + shop + ".debug", shop, shop + ".stripped"])
        try tool(
            "/opt/swift/usr/bin/clang",
            ["-O2", "-g", "-Wl,--build-id", sources + "/inline.c", "-o", fixtures.path("inline")])
        return fixtures
    }

    static func tool(_ path: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIFixtureError(reason: "\(path) \(arguments) exited \(process.terminationStatus)")
        }
    }

    /// The address of the `Swift runtime failure: Division by zero` trap in `shop` (scanned with the library).
    func trapAddress() throws -> UInt64 {
        let symbolicator = try ModuleSymbolicator(debugFile: path("shop"))
        for address in UInt64(0x1000)..<0x10000
        where symbolicator.symbolicate(address).swiftRuntimeFailure == "Division by zero" {
            return address
        }
        throw CLIFixtureError(reason: "no trap found in shop")
    }

    /// The report template with the placeholders filled from `shop` loaded at `base`.
    func report(base: UInt64 = 0x5555_5555_4000) throws -> String {
        let template = try String(
            contentsOfFile: CLIFixtures.repository + "/fixtures/reports/swift-trap.template.json",
            encoding: .utf8)
        let info = try ObjectInfo(path: path("shop"))
        let main = try unwrap(symbol("main"))
        func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
        let values: [String: String] = [
            "exe": path("shop"), "base": hex(base), "size": "0x8000", "build_id": info.codeId ?? "",
            "trap": hex(base + (try trapAddress())), "main_return": hex(base + main + 0x11),
            "main_exact": hex(base + main),
        ]
        var text = template
        for (key, value) in values { text = text.replacingOccurrences(of: "{{\(key)}}", with: value) }
        return text
    }

    /// A function's file address from `nm`.
    func symbol(_ name: String) throws -> UInt64? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/nm")
        process.arguments = [path("shop")]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3 && parts[2] == name { return UInt64(parts[0], radix: 16) }
        }
        return nil
    }
}

struct CLIFixtureError: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

func unwrap<T>(_ value: T?) throws -> T {
    guard let value else { throw CLIFixtureError(reason: "missing value") }
    return value
}

/// One temporary directory per test process (`<tmp>/cohorly-cli-tests-<pid>`), holding every file the tests write.
/// Removed when the test process exits; directories left by earlier test processes that are no longer running
/// (killed before they could) are removed on first use.
enum Scratch {
    static let prefix = "cohorly-cli-tests-"

    static let root: String = {
        let temporary = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: temporary + name)
            }
        }
        let path = temporary + prefix + "\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: Scratch.root) }
        return path
    }()

    /// An empty directory: the commands' working directory (`debug-files find` searches it by default).
    static let emptyDirectory: String = {
        let path = root + "/empty"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// `root/name`.
    static func path(_ name: String) -> String { root + "/" + name }
}
