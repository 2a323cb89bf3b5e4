import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Exit statuses of every `cohorly` command (listed in `cohorly --help` and the README).
enum ExitStatus: Int32 {
    /// Everything worked.
    case success = 0
    /// Some input failed (a file that could not be read, an address or id not found, …).
    case failure = 1
    /// The command line was wrong.
    case usage = 2
}

/// A subcommand: parses its own arguments (after its name) and prints its output.
protocol Command {
    /// The words that select the command, e.g. `["debug-files", "check"]`.
    static var words: [String] { get }
    /// One line for `cohorly --help`.
    static var summary: String { get }
    /// The usage block for `cohorly <command> --help`.
    static var help: String { get }
    /// Runs with the arguments that follow the command words.
    static func run(_ arguments: [String]) -> ExitStatus
}

/// A command-line mistake: printed as `cohorly: <reason>` plus a usage hint, exit status 2.
struct UsageError: Error {
    let reason: String
}

/// Parsed arguments of one command: positionals, boolean flags and repeatable valued options.
struct ParsedArguments {
    var positionals: [String] = []
    var flags: Set<String> = []
    var options: [String: [String]] = [:]

    /// Parses `--flag`, `--option VALUE`, `--option=VALUE` and positionals (`--` ends the options).
    /// `-h`/`--help` is always accepted as the flag `--help`. Anything else starting with `-` is an error.
    static func parse(_ arguments: [String], flags: Set<String>, options: Set<String>)
        throws(UsageError)
        -> ParsedArguments
    {
        var result = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                result.flags.insert("--help")
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if flags.contains(name) && inlineValue == nil {
                result.flags.insert(name)
            } else if options.contains(name) {
                if let inlineValue {
                    result.options[name, default: []].append(inlineValue)
                } else if index < arguments.count {
                    result.options[name, default: []].append(arguments[index])
                    index += 1
                } else {
                    throw UsageError(reason: "option '\(name)' needs a value")
                }
            } else {
                throw UsageError(reason: "unknown option '\(name)'")
            }
        }
        return result
    }
}

/// Output helpers (stdout for results, stderr for errors).
enum Console {
    static func out(_ text: String) {
        print(text)
    }

    static func error(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    /// Writes `text` as is (no newline added) to a file descriptor, stdout by default.
    static func write(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
        write(Array(text.utf8), to: descriptor)
    }

    /// Writes bytes as they are to a file descriptor, stdout by default.
    static func write(_ data: [UInt8], to descriptor: Int32 = STDOUT_FILENO) {
        data.withUnsafeBufferPointer { write($0, to: descriptor) }
    }

    /// Writes bytes as they are to a file descriptor (after whatever `print` still buffers).
    static func write(_ data: UnsafeBufferPointer<UInt8>, to descriptor: Int32 = STDOUT_FILENO) {
        if descriptor == STDOUT_FILENO { fflush(nil) }
        var bytes = data
        while let start = bytes.baseAddress, !bytes.isEmpty {
            let written = Glibc.write(descriptor, start, bytes.count)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            bytes = UnsafeBufferPointer(rebasing: bytes[written...])
        }
    }

    /// Everything readable from a file descriptor (stdin by default) until its end.
    static func readAll(from descriptor: Int32 = STDIN_FILENO) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Prints `cohorly: <reason>` and the usage hint for a command; returns the usage exit status.
    static func usageError(_ reason: String, command: String) -> ExitStatus {
        error("cohorly: \(reason)")
        error("Run 'cohorly \(command) --help' for usage.")
        return .usage
    }

    /// Whether stdout is a terminal (human output) or a pipe.
    static var isTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
}

/// Minimal JSON writing for `--json` output (keys keep the order given).
enum JSON {
    indirect enum Value {
        case string(String)
        case int(Int)
        /// An unsigned 64-bit number (offsets, sizes): written exactly, never converted to `Int`.
        case uint(UInt64)
        case bool(Bool)
        case null
        case array([Value])
        case object([(String, Value)])
    }

    static func string(_ value: String?) -> Value { value.map(Value.string) ?? .null }

    static func render(_ value: Value) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// ``render(_:)`` as UTF-8 bytes.
    static func bytes(_ value: Value) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(value, into: &out)
        return out
    }

    private static func write(_ value: Value, into out: inout [UInt8]) {
        switch value {
        case .string(let text): escape(text, into: &out)
        case .int(let number): out += String(number).utf8
        case .uint(let number): out += String(number).utf8
        case .bool(let flag): out += (flag ? "true" : "false").utf8
        case .null: out += "null".utf8
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let pairs):
            out.append(UInt8(ascii: "{"))
            for (position, pair) in pairs.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                escape(pair.0, into: &out)
                out.append(UInt8(ascii: ":"))
                write(pair.1, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped, UTF-8 kept. Runs of
    /// bytes that need no escape (nearly all of a path, id or name) are copied whole.
    private static func escape(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case 0x0a: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x0d: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                default:
                    out += Array("\\u00".utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0xf)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// `0x…` / plain hex address parsing and printing.
enum Hex {
    /// Parses `0x1f54`, `0X1F54` or `1f54` (surrounding ASCII spaces and tabs allowed).
    static func parse(_ text: String) -> UInt64? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    /// Parses UTF-8 bytes as ``parse(_:)-(String)`` does.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0d { end -= 1 }
        if end - start > 2, bytes[start] == UInt8(ascii: "0"),
            bytes[start + 1] == UInt8(ascii: "x") || bytes[start + 1] == UInt8(ascii: "X")
        {
            start += 2
        }
        guard start < end, end - start <= 16 else { return nil }
        var value: UInt64 = 0
        for byte in bytes[start..<end] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    static func format(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
}

/// Bytes for a file descriptor, gathered in a fixed buffer and written when it fills (and at the end); or, with
/// no descriptor, gathered in memory (the buffer grows). For commands that print many small pieces, such as
/// `symbolicate --exe`.
struct ByteOutput: ~Copyable {
    private var storage: UnsafeMutableBufferPointer<UInt8>
    /// How many bytes are gathered.
    private(set) var count = 0
    private let descriptor: Int32?

    init(descriptor: Int32? = STDOUT_FILENO, capacity: Int = 1 << 16) {
        storage = .allocate(capacity: max(capacity, 64))
        self.descriptor = descriptor
    }

    deinit {
        if let descriptor, count > 0 {
            Console.write(UnsafeBufferPointer(rebasing: storage[0..<count]), to: descriptor)
        }
        storage.deallocate()
    }

    /// Writes what is gathered (no-op in memory).
    mutating func flush() {
        guard let descriptor, count > 0 else { return }
        Console.write(UnsafeBufferPointer(rebasing: storage[0..<count]), to: descriptor)
        count = 0
    }

    /// The bytes gathered so far (in memory: everything appended).
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try body(UnsafeBufferPointer(rebasing: storage[0..<count]))
    }

    /// Makes room for `needed` more bytes: writes out (descriptor) or grows (memory).
    private mutating func makeRoom(_ needed: Int) {
        guard storage.count - count < needed else { return }
        if descriptor != nil {
            flush()
            if needed <= storage.count { return }
        }
        let grown = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(storage.count * 2, count + needed))
        if let source = storage.baseAddress, let target = grown.baseAddress {
            target.update(from: source, count: count)
        }
        storage.deallocate()
        storage = grown
    }

    mutating func append(_ byte: UInt8) {
        makeRoom(1)
        storage[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let descriptor, bytes.count > storage.count {
            flush()
            Console.write(bytes, to: descriptor)
            return
        }
        makeRoom(bytes.count)
        guard let source = bytes.baseAddress, let target = storage.baseAddress else { return }
        (target + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends text from a file (a name or path of a debug file) with its control characters escaped as
    /// ``TerminalText`` does (`\n`, `\r`, `\t`, `\x1b`, `\u{9b}`); text without any is copied as it is.
    mutating func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        func isC1(_ index: Int) -> Bool {
            bytes[index] == 0xc2 && index + 1 < bytes.count && (0x80...0x9f).contains(bytes[index + 1])
        }
        guard (0..<bytes.count).contains(where: { bytes[$0] < 0x20 || bytes[$0] == 0x7f || isC1($0) }) else {
            append(bytes)
            return
        }
        let hex = Array("0123456789abcdef".utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case 0x0a: append("\\n")
            case 0x0d: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20, 0x7f:
                append("\\x")
                append(hex[Int(byte >> 4)])
                append(hex[Int(byte & 0xf)])
            case 0xc2 where isC1(index - 1):
                let next = bytes[index]
                index += 1
                append("\\u{")
                append(hex[Int(next >> 4)])
                append(hex[Int(next & 0xf)])
                append("}")
            default: append(byte)
            }
        }
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `0x` and the lowercase hexadecimal digits of `value`.
    mutating func appendHex(_ value: UInt64) {
        makeRoom(18)
        storage[count] = UInt8(ascii: "0")
        storage[count + 1] = UInt8(ascii: "x")
        let digits = max(1, (64 - value.leadingZeroBitCount + 3) / 4)
        for index in 0..<digits {
            let digit = UInt8(truncatingIfNeeded: (value >> UInt64(4 * (digits - 1 - index))) & 0xf)
            storage[count + 2 + index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
        }
        count += 2 + digits
    }

    /// Appends the decimal digits of `value`.
    mutating func appendDecimal(_ value: UInt64) {
        makeRoom(20)
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        rest = value
        for index in stride(from: count + digits - 1, through: count, by: -1) {
            storage[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        count += digits
    }
}

extension String {
    /// The string without leading and trailing whitespace.
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}

/// Work spread over the machine's cores.
enum Parallel {
    /// `transform` applied to every element, on up to as many threads as there are cores (items are dealt out
    /// in turn, so big and small ones mix), the results in the order of `items`.
    static func map<Item: Sendable, Result: Sendable>(
        _ items: [Item], _ transform: @Sendable (Item) -> Result
    ) -> [Result] {
        let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let threads = min(cores, max(1, items.count / 8))
        guard threads > 1 else { return items.map(transform) }
        let slots = Slots<Result>(count: items.count)
        defer { slots.release() }
        items.withUnsafeBufferPointer { buffer in
            let shared = SharedItems(buffer: buffer)
            DispatchQueue.concurrentPerform(iterations: threads) { part in
                for index in stride(from: part, to: shared.buffer.count, by: threads) {
                    slots.storage[index] = transform(shared.buffer[index])
                }
            }
        }
        return slots.storage.map { slot in
            guard let result = slot else { preconditionFailure("every slot is written before the threads end") }
            return result
        }
    }

    /// The result slots: each thread writes its own indices only, and they are read after all threads end.
    private final class Slots<Result>: @unchecked Sendable {
        let storage: UnsafeMutableBufferPointer<Result?>
        init(count: Int) {
            storage = .allocate(capacity: count)
            storage.initialize(repeating: nil)
        }
        func release() {
            _ = storage.deinitialize()
            storage.deallocate()
        }
    }

    /// The items, read (never written) by every thread.
    private struct SharedItems<Item: Sendable>: @unchecked Sendable {
        let buffer: UnsafeBufferPointer<Item>
    }
}
