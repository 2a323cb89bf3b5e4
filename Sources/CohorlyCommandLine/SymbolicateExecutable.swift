import CohorlySymbols

#if canImport(Glibc)
    import Glibc
#endif

/// `cohorly symbolicate --exe FILE [ADDR…]`: addresses of one ELF file, printed frame by frame.
package enum SymbolicateExecutable {
    /// Where the addresses come from: the command's arguments, or text with one address per line read from a
    /// descriptor a block at a time (a long list is never held whole).
    package enum Input {
        case arguments([String])
        case descriptor(Int32)

        /// Calls `body` with the UTF-8 bytes of each address (blank lines skipped).
        package func forEach(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
            switch self {
            case .arguments(let arguments):
                for argument in arguments {
                    var argument = argument
                    argument.withUTF8(body)
                }
            case .descriptor(let descriptor):
                var splitter = LineSplitter()
                var block = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let count = block.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    block.withUnsafeBufferPointer { splitter.feed(UnsafeBufferPointer(rebasing: $0[..<count]), body) }
                }
                splitter.finish(body)
            }
        }
    }

    /// Splits text arriving in blocks into its non-blank lines (a line cut by a block's end is kept until
    /// its rest arrives).
    private struct LineSplitter {
        private var partial: [UInt8] = []

        mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
            var start = 0
            for index in 0..<bytes.count where bytes[index] == 0x0a {
                if partial.isEmpty {
                    Self.emit(UnsafeBufferPointer(rebasing: bytes[start..<index]), body)
                } else {
                    partial.append(contentsOf: bytes[start..<index])
                    partial.withUnsafeBufferPointer { Self.emit($0, body) }
                    partial.removeAll(keepingCapacity: true)
                }
                start = index + 1
            }
            partial.append(contentsOf: bytes[start..<bytes.count])
        }

        mutating func finish(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
            partial.withUnsafeBufferPointer { Self.emit($0, body) }
            partial.removeAll()
        }

        private static func emit(_ line: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
            guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0d }) else { return }
            body(line)
        }
    }

    /// How many addresses are looked up together: the batch sorts them (neighbours share functions and cache
    /// lines) and each is printed in the order given as soon as its batch is done, so memory does not grow
    /// with the length of the input.
    package static let batchSize = 4096

    package static func run(
        executable: String, input: Input, debugDirs: [String], json: Bool, names: Demangler.Style = .full,
        cache: String? = nil
    ) -> ExitStatus {
        let symbolicator: ModuleSymbolicator
        do {
            if let cache {
                symbolicator = try ModuleSymbolicator(cache: cache, codeFile: executable)
            } else {
                symbolicator = try ModuleOpener(debugDirs: debugDirs).open(codeFile: executable, buildId: nil)
            }
        } catch {
            Console.error("cohorly: \(error)")
            return .failure
        }
        var status = ExitStatus.success
        var addresses: [UInt64] = []
        if json {
            input.forEach { bytes in
                guard let address = parse(bytes, status: &status) else { return }
                addresses.append(address)
            }
            let items: [JSON.Value] = addresses.map { address in
                let result = symbolicator.symbolicate(address)
                if result.frames.isEmpty { status = .failure }
                return .object([
                    ("address", .string(Hex.format(address))),
                    ("frames", .array(result.frames.map(FrameJSON.frame))),
                ])
            }
            Console.out(JSON.render(.array(items)))
            return status
        }
        let writer = TextWriter(symbolicator: symbolicator, names: names)
        addresses.reserveCapacity(batchSize)
        input.forEach { bytes in
            guard let address = parse(bytes, status: &status) else { return }
            addresses.append(address)
            if addresses.count == batchSize {
                if !writer.write(addresses) { status = .failure }
                addresses.removeAll(keepingCapacity: true)
            }
        }
        if !addresses.isEmpty && !writer.write(addresses) { status = .failure }
        writer.flush()
        return status
    }

    /// The address in `bytes`, or nil (and a message, and `status` failed) when they are not hexadecimal.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, status: inout ExitStatus) -> UInt64? {
        guard let address = Hex.parse(bytes) else {
            Console.error("cohorly: '\(String(decoding: bytes, as: UTF8.self))' is not a hexadecimal address")
            status = .failure
            return nil
        }
        return address
    }

    /// Writes addresses in llvm-symbolizer's text layout: the address, then per frame the function and
    /// file:line:column, a blank line after each address.
    private final class TextWriter {
        let symbolicator: ModuleSymbolicator
        let names: Demangler.Style
        /// Written on every frame: no dynamic exclusivity check (one thread; no access overlaps another).
        @exclusivity(unchecked) var output = ByteOutput()
        /// --simplified: the runtime's simplified form of each linkage name, made once per name.
        var simplifiedNames: [Int32: [UInt8]] = [:]
        /// Per text number: whether its bytes were found to need escaping (``Plainness``), so that a name or path
        /// printed again is not scanned again (a path is printed with most of the frames of its file).
        @exclusivity(unchecked) var plainness: [Plainness] = []

        enum Plainness: UInt8 {
            case unknown, plain, escaped
        }

        init(symbolicator: ModuleSymbolicator, names: Demangler.Style) {
            self.symbolicator = symbolicator
            self.names = names
        }

        /// Looks `addresses` up as one batch and writes them in the order given; false when one was not found.
        func write(_ addresses: [UInt64]) -> Bool {
            let batch = symbolicator.records(for: addresses)
            var found = true
            symbolicator.text.withView { text in
                batch.records.withUnsafeBufferPointer { records in
                    for group in batch.groupOfAddress {
                        let group = batch.groups[Int(group)]
                        if group.frames.isEmpty { found = false }
                        write(group.address, records[group.frames], text)
                    }
                }
            }
            return found
        }

        private func write(
            _ address: UInt64, _ frames: UnsafeBufferPointer<FrameRecord>.SubSequence, _ text: TextTable.View
        ) {
            output.appendHex(address)
            output.append(0x0a)
            if frames.isEmpty { output.append("??\n??:0:0\n") }
            for frame in frames {
                if let name = simplified(frame.rawFunction, text), !name.isEmpty {
                    name.withUnsafeBufferPointer { output.appendEscaped($0) }
                } else if frame.function >= 0 {
                    append(frame.function, text)
                } else {
                    output.append("??")
                }
                if let offset = frame.symbolOffset {
                    output.append(" + ")
                    output.appendDecimal(offset)
                }
                output.append(0x0a)
                if frame.file >= 0 { append(frame.file, text) } else { output.append("??") }
                output.append(UInt8(ascii: ":"))
                output.appendDecimal(UInt64(frame.line))
                output.append(UInt8(ascii: ":"))
                output.appendDecimal(UInt64(frame.column))
                output.append(0x0a)
            }
            output.append(0x0a)
        }

        /// Appends text `number`, escaped when it needs it (see `plainness`).
        private func append(_ number: Int32, _ text: TextTable.View) {
            let index = Int(number)
            if index >= plainness.count {
                plainness.append(contentsOf: repeatElement(.unknown, count: index + 1 - plainness.count))
            }
            let bytes = text[number]
            switch plainness[index] {
            case .plain: output.append(bytes)
            case .escaped: output.appendEscaped(bytes)
            case .unknown:
                let plain = !ByteOutput.mayNeedEscaping(bytes)
                plainness[index] = plain ? .plain : .escaped
                if plain { output.append(bytes) } else { output.appendEscaped(bytes) }
            }
        }

        private func simplified(_ raw: Int32, _ text: TextTable.View) -> [UInt8]? {
            guard names == .simplified, raw >= 0 else { return nil }
            if let known = simplifiedNames[raw] { return known }
            let rawName = String(decoding: text[raw], as: UTF8.self)
            let name = Demangler.name(function: nil, rawFunction: rawName, style: .simplified).map { Array($0.utf8) }
            simplifiedNames[raw] = name ?? []
            return name
        }

        func flush() { output.flush() }
    }
}

/// JSON shape of a frame (shared by both `symbolicate` modes).
package enum FrameJSON {
    package static func frame(_ frame: SymbolicatedFrame) -> JSON.Value {
        var pairs: [(String, JSON.Value)] = [
            ("function", JSON.string(frame.function)),
            ("raw_function", JSON.string(frame.rawFunction)),
            ("file", JSON.string(frame.file)),
            ("line", .int(frame.line)),
            ("column", .int(frame.column)),
            ("inlined", .bool(frame.isInlined)),
        ]
        if let offset = frame.symbolOffset { pairs.append(("symbol_offset", .uint(offset))) }
        return .object(pairs)
    }
}
