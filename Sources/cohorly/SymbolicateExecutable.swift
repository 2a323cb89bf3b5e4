import CohorlySymbols

/// `cohorly symbolicate --exe FILE [ADDR…]`: addresses of one ELF file, printed frame by frame.
enum SymbolicateExecutable {
    /// Where the addresses come from: the command's arguments, or text with one address per line (stdin).
    enum Input {
        case arguments([String])
        case lines([UInt8])

        /// Calls `body` with the UTF-8 bytes of each address (blank lines skipped).
        func forEach(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
            switch self {
            case .arguments(let arguments):
                for argument in arguments {
                    var argument = argument
                    argument.withUTF8(body)
                }
            case .lines(let text):
                text.withUnsafeBufferPointer { bytes in
                    var start = 0
                    var isBlank = true
                    for index in 0...bytes.count {
                        guard index == bytes.count || bytes[index] == 0x0a else {
                            let byte = bytes[index]
                            if byte != 0x20 && byte != 0x09 && byte != 0x0d { isBlank = false }
                            continue
                        }
                        if !isBlank { body(UnsafeBufferPointer(rebasing: bytes[start..<index])) }
                        start = index + 1
                        isBlank = true
                    }
                }
            }
        }
    }

    static func run(
        executable: String, input: Input, debugDirs: [String], json: Bool, names: Demangler.Style = .full
    ) -> ExitStatus {
        let symbolicator: ModuleSymbolicator
        do {
            symbolicator = try ModuleOpener(debugDirs: debugDirs).open(codeFile: executable, buildId: nil)
        } catch {
            Console.error("cohorly: \(error)")
            return .failure
        }
        var status = ExitStatus.success
        var addresses: [UInt64] = []
        input.forEach { bytes in
            guard let address = Hex.parse(bytes) else {
                Console.error("cohorly: '\(String(decoding: bytes, as: UTF8.self))' is not a hexadecimal address")
                status = .failure
                return
            }
            addresses.append(address)
        }
        if json {
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
        // llvm-symbolizer's text layout: the address, then per frame the function and file:line:column. Each
        // distinct address's text is made in ascending address order (neighbours share names: cache hits),
        // then the pieces are written in the order asked.
        let batch = symbolicator.records(for: addresses)
        var pieces = ByteOutput(descriptor: nil, capacity: batch.groups.count * 128)
        var pieceEnds: [Int] = []
        pieceEnds.reserveCapacity(batch.groups.count)
        // --simplified: the runtime's simplified form of each linkage name, made once per name.
        var simplifiedNames: [Int32: [UInt8]] = [:]
        symbolicator.text.withView { text in
            func simplified(_ raw: Int32) -> [UInt8]? {
                guard names == .simplified, raw >= 0 else { return nil }
                if let known = simplifiedNames[raw] { return known }
                let name = Demangler.simplified(String(decoding: text[raw], as: UTF8.self)).map { Array($0.utf8) }
                simplifiedNames[raw] = name ?? []
                return name
            }
            batch.records.withUnsafeBufferPointer { records in
                for group in batch.groups {
                    pieces.appendHex(group.address)
                    pieces.append(0x0a)
                    if group.frames.isEmpty {
                        status = .failure
                        pieces.append("??\n??:0:0\n")
                    }
                    for frame in records[group.frames] {
                        if let name = simplified(frame.rawFunction), !name.isEmpty {
                            name.withUnsafeBufferPointer { pieces.appendEscaped($0) }
                        } else if frame.function >= 0 {
                            pieces.appendEscaped(text[frame.function])
                        } else {
                            pieces.append("??")
                        }
                        if let offset = frame.symbolOffset {
                            pieces.append(" + ")
                            pieces.appendDecimal(offset)
                        }
                        pieces.append(0x0a)
                        if frame.file >= 0 { pieces.appendEscaped(text[frame.file]) } else { pieces.append("??") }
                        pieces.append(UInt8(ascii: ":"))
                        pieces.appendDecimal(UInt64(frame.line))
                        pieces.append(UInt8(ascii: ":"))
                        pieces.appendDecimal(UInt64(frame.column))
                        pieces.append(0x0a)
                    }
                    pieces.append(0x0a)
                    pieceEnds.append(pieces.count)
                }
            }
        }
        var output = ByteOutput()
        pieces.withBytes { bytes in
            for group in batch.groupOfAddress {
                let start = group == 0 ? 0 : pieceEnds[Int(group) - 1]
                output.append(UnsafeBufferPointer(rebasing: bytes[start..<pieceEnds[Int(group)]]))
            }
        }
        output.flush()
        return status
    }
}

/// JSON shape of a frame (shared by both `symbolicate` modes).
enum FrameJSON {
    static func frame(_ frame: SymbolicatedFrame) -> JSON.Value {
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
