import Foundation

/// What `llvm-symbolizer --inlines` (the toolchain's, LLVM 21) says about addresses: the oracle.
enum Reference {
    struct Frame: Equatable, CustomStringConvertible {
        var function: String
        var file: String
        var line: Int
        var column: Int
        var description: String { "\(function) \(file):\(line):\(column)" }
    }

    /// Frames per address, innermost first, with raw (not demangled) function names. `symbolizer`: another
    /// llvm-symbolizer (Debian's `llvm-symbolizer-14`, say).
    static func symbolize(
        _ file: String, _ addresses: [UInt64], symbolizer: String = Fixtures.llvmSymbolizer
    ) throws -> [[Frame]] {
        let input = addresses.map { "0x" + String($0, radix: 16) }.joined(separator: "\n") + "\n"
        let output = try run(
            symbolizer,
            ["--inlines", "--no-demangle", "--output-style=JSON", "--obj=" + file],
            input: input)
        var result: [[Frame]] = []
        // One JSON array per input line.
        for line in output.split(separator: "\n") {
            guard let data = line.data(using: .utf8) else { continue }
            let parsed = try JSONSerialization.jsonObject(with: data)
            let entries = parsed as? [[String: Any]] ?? [parsed as? [String: Any] ?? [:]]
            for entry in entries {
                let symbols = entry["Symbol"] as? [[String: Any]] ?? []
                result.append(
                    symbols.map {
                        Frame(
                            function: $0["FunctionName"] as? String ?? "", file: $0["FileName"] as? String ?? "",
                            line: $0["Line"] as? Int ?? 0, column: $0["Column"] as? Int ?? 0)
                    })
            }
        }
        return result
    }

    /// Function symbols (`nm -S --defined-only`): start and size, for entry points and random inner addresses.
    static func functions(_ file: String) throws -> [(start: UInt64, size: UInt64)] {
        let output = try run("/usr/bin/nm", ["-S", "--defined-only", file])
        return output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 4, "tTwW".contains(parts[2]), let start = UInt64(parts[0], radix: 16),
                let size = UInt64(parts[1], radix: 16)
            else { return nil }
            return (start, size)
        }
    }
}
