import Foundation

/// Runs a program and returns its standard output (standard error is discarded unless it fails).
func run(
    _ executable: String, _ arguments: [String], input: String? = nil,
    environment: [String: String]? = nil, allowFailure: Bool = false
)
    throws -> String
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe()
    let errors = Pipe()
    let stdin = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try stdin.fileHandleForWriting.close()
    // Read both pipes before waiting so a large output cannot block the child.
    let errBox = Locked(Data())
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errBox.set(errors.fileHandleForReading.readDataToEndOfFile())
        group.leave()
    }
    let outData = output.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    let errData = errBox.get()
    process.waitUntilExit()
    guard process.terminationStatus == 0 || allowFailure else {
        throw FixtureError.failed(
            "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                + String(decoding: errData, as: UTF8.self))
    }
    return String(decoding: outData, as: UTF8.self)
}

/// A value shared between threads behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func update(_ body: (inout Value) -> Void) { lock.withLock { body(&value) } }
}

enum FixtureError: Error, CustomStringConvertible {
    case failed(String)
    var description: String {
        switch self {
        case .failed(let text): return text
        }
    }
}

/// The ELF fixtures, compiled once per test process from `fixtures/symbols/` into a temporary directory.
///
/// - `inline_c`: C at -O2 with inlining (clang, DWARF 5); `inline_gcc`: the same with gcc (DWARF 5, gcc's shape)
/// - `templates`: C++ with namespaces and templates at -O2
/// - `shop_debug` / `shop_release`: Swift at -Onone / -O, with -g
/// - `shop_release.stripped` + `shop_release.debug`: `objcopy --only-keep-debug` companion and debuglink
/// - `inline_nopie`: a non-PIE executable (first PT_LOAD at 0x400000)
/// - `inline_other`: inline.c at -O1 (another build id); `inline_split`: -gsplit-dwarf
/// - `inline_noid` (+ `.debug`, `.stripped`): no build id, found by debuglink name + CRC
/// - `inline_zlib`: `-gz=zlib` (SHF_COMPRESSED); `inline_zlib_gnu`: `.zdebug_*`; `inline_zstd`: zstd sections
struct Fixtures: Sendable {
    let directory: String

    static let sources: String = {
        let here = URL(fileURLWithPath: #filePath)
        return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fixtures/symbols").path
    }()

    static let clang = "/opt/swift/usr/bin/clang"
    static let swiftc = "/opt/swift/usr/bin/swiftc"
    static let llvmSymbolizer = "/opt/swift/usr/bin/llvm-symbolizer"
    static let objcopy = "/usr/bin/objcopy"

    /// Built once; the error (as text) when the toolchain could not build them.
    static let shared: Result<Fixtures, FixtureError> = {
        do {
            return .success(try Fixtures.build())
        } catch let error as FixtureError {
            return .failure(error)
        } catch {
            return .failure(.failed("\(error)"))
        }
    }()

    static func get() throws -> Fixtures { try shared.get() }

    func path(_ name: String) -> String { directory + "/" + name }

    private static func build() throws -> Fixtures {
        let directory = Scratch.path("fixtures")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fixtures = Fixtures(directory: directory)
        let c = sources + "/inline.c"
        let group = DispatchGroup()
        let failures = Locked<[String]>([])
        func background(_ work: @escaping @Sendable () throws -> Void) {
            group.enter()
            DispatchQueue.global().async {
                do { try work() } catch { failures.update { $0.append("\(error)") } }
                group.leave()
            }
        }
        // The two Swift builds take longest: run them while the C/C++ ones build.
        background {
            _ = try run(
                swiftc,
                [
                    "-Onone", "-g", "-module-name", "shop", sources + "/shop.swift", "-o",
                    fixtures.path("shop_debug"),
                ])
        }
        background {
            _ = try run(
                swiftc,
                [
                    "-O", "-g", "-module-name", "shop", sources + "/shop.swift", "-o",
                    fixtures.path("shop_release"),
                ])
            let release = fixtures.path("shop_release")
            _ = try run(objcopy, ["--only-keep-debug", release, release + ".debug"])
            // The debuglink is resolved relative to the working directory of objcopy: give the full path.
            _ = try run(
                objcopy,
                [
                    "--strip-all", "--add-gnu-debuglink=" + release + ".debug", release,
                    release + ".stripped",
                ])
        }
        _ = try run(clang, ["-O2", "-g", "-Wl,--build-id", c, "-o", fixtures.path("inline_c")])
        _ = try run("/usr/bin/gcc", ["-O2", "-g", c, "-o", fixtures.path("inline_gcc")])
        _ = try run(
            clang + "++",
            ["-O2", "-g", "-Wl,--build-id", sources + "/templates.cpp", "-o", fixtures.path("templates")])
        _ = try run(
            clang, ["-O2", "-g", "-gz=zlib", "-Wl,--build-id", c, "-o", fixtures.path("inline_zlib")])
        _ = try run(
            objcopy,
            [
                "--compress-debug-sections=zlib-gnu", fixtures.path("inline_c"),
                fixtures.path("inline_zlib_gnu"),
            ])
        _ = try run(
            objcopy,
            ["--compress-debug-sections=zstd", fixtures.path("inline_c"), fixtures.path("inline_zstd")])
        _ = try run(
            clang, ["-O2", "-g", "-no-pie", "-Wl,--build-id", c, "-o", fixtures.path("inline_nopie")])
        // Split DWARF (DWARF 5 skeleton units; the .dwo next to it) and a binary without build id + debuglink.
        _ = try run(clang, ["-O2", "-g", "-gsplit-dwarf", c, "-o", fixtures.path("inline_split")])
        let noId = fixtures.path("inline_noid")
        _ = try run(clang, ["-O2", "-g", "-Wl,--build-id=none", c, "-o", noId])
        _ = try run(objcopy, ["--only-keep-debug", noId, noId + ".debug"])
        _ = try run(
            objcopy, ["--strip-all", "--add-gnu-debuglink=" + noId + ".debug", noId, noId + ".stripped"])
        // Same program, different code: another build id (for "a file with the wrong id is rejected").
        _ = try run(clang, ["-O1", "-g", "-Wl,--build-id", c, "-o", fixtures.path("inline_other")])
        let inline = fixtures.path("inline_c")
        _ = try run(objcopy, ["--only-keep-debug", inline, inline + ".debug"])
        _ = try run(
            objcopy,
            ["--strip-all", "--add-gnu-debuglink=" + inline + ".debug", inline, inline + ".stripped"])
        group.wait()
        if let failure = failures.get().first { throw FixtureError.failed(failure) }
        return fixtures
    }
}

/// A deterministic generator (SplitMix64) so "random" addresses are the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One temporary directory per test process (`<tmp>/cohorly-symbols-tests-<pid>`), holding every file the tests write.
/// Removed when the test process exits; directories left by earlier test processes that are no longer running
/// (killed before they could) are removed on first use.
enum Scratch {
    static let prefix = "cohorly-symbols-tests-"

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

    /// `root/name`.
    static func path(_ name: String) -> String { root + "/" + name }
}
