import Foundation

/// The properties every event carries unless super or caller properties override them.
package struct AutomaticProperties: Sendable {
    /// `$lib`, this SDK's name.
    package static let libraryName = "cohorly-swift-linux"
    /// `$lib_version`, this SDK's version.
    package static let libraryVersion = "0.1.0"

    /// The properties (`$lib`, `$os`, `$os_version`, …). CohorlyCrash copies them into the crash-time context.
    package let values: Properties

    /// Reads `/etc/os-release` (or `osRelease`) and `uname` once.
    package init(osReleasePath: String = "/etc/os-release") {
        var values: Properties = [
            "$lib": .string(Self.libraryName),
            "$lib_version": .string(Self.libraryVersion),
            "$os": "Linux",
        ]
        let release = Self.parseOSRelease(Self.readSmallFile(osReleasePath) ?? "")
        if let version = release["VERSION_ID"] ?? release["BUILD_ID"] {
            values["$os_version"] = .string(version)
        }
        if let name = release["NAME"] { values["$os_distribution"] = .string(name) }
        var names = utsname()
        if uname(&names) == 0 {
            values["$kernel_version"] = .string(Self.string(from: &names.release))
            values["$arch"] = .string(Self.string(from: &names.machine))
        }
        self.values = values
    }

    /// `KEY=value` lines, quotes removed.
    static func parseOSRelease(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "="), !line.hasPrefix("#") else { continue }
            var value = String(line[line.index(after: equals)...].drop { $0 == " " || $0 == "\t" })
            while value.last == " " || value.last == "\t" { value.removeLast() }
            if value.count >= 2, let first = value.first, first == "\"" || first == "'",
                value.last == first
            {
                value = String(value.dropFirst().dropLast())
            }
            result[String(line[..<equals])] = value
        }
        return result
    }

    /// A small text file read with plain system calls: this runs at install time of the crash recorder too, where
    /// Foundation's file and character-set machinery would cost a megabyte of resident memory.
    package static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func string<T>(from tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { bytes in
            let prefix = bytes.prefix { $0 != 0 }
            return String(decoding: prefix, as: UTF8.self)
        }
    }
}

/// A fast generator (xoshiro256**) seeded from the system generator: insert ids need uniqueness, not secrecy.
package struct FastRandom: RandomNumberGenerator {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    package init() {
        var system = SystemRandomNumberGenerator()
        state = (system.next(), system.next(), system.next(), system.next() | 1)
    }

    package mutating func next() -> UInt64 {
        let result = ((state.1 &* 5) << 7 | (state.1 &* 5) >> 57) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = state.3 << 45 | state.3 >> 19
        return result
    }
}

/// Random version-4 UUIDs in lowercase text form.
package enum UUIDv4 {
    package static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return make(using: &generator)
    }

    package static func make<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var high = generator.next() as UInt64
        var low = generator.next() as UInt64
        high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000  // version 4
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // variant 10
        // 8-4-4-4-12 lowercase hex written straight into the string's storage (this runs once per event).
        return String(unsafeUninitializedCapacity: 36) { buffer in
            let digits: StaticString = "0123456789abcdef"
            var index = 0
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    if index == 8 || index == 13 || index == 18 || index == 23 {
                        buffer[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    buffer[index] = digits.utf8Start[Int((value >> UInt64(shift)) & 0xF)]
                    index += 1
                }
            }
            put(high, nibbles: 16)
            put(low, nibbles: 16)
            return index
        }
    }
}
