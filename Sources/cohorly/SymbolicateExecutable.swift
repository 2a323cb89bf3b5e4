import CohorlySymbols

/// `cohorly symbolicate --exe FILE [ADDR…]`: addresses of one ELF file, printed frame by frame.
enum SymbolicateExecutable {
    static func run(executable: String, addresses: [String], debugDirs: [String], json: Bool)
        -> ExitStatus
    {
        let symbolicator: ModuleSymbolicator
        do {
            symbolicator = try ModuleOpener(debugDirs: debugDirs).open(codeFile: executable, buildId: nil)
        } catch {
            Console.error("cohorly: \(error)")
            return .failure
        }
        var status = ExitStatus.success
        var items: [JSON.Value] = []
        var output: [UInt8] = []
        output.reserveCapacity(1 << 17)
        for text in addresses {
            guard let address = Hex.parse(text) else {
                Console.error("cohorly: '\(text)' is not a hexadecimal address")
                status = .failure
                continue
            }
            let result = symbolicator.symbolicate(address)
            if result.frames.isEmpty { status = .failure }
            if json {
                items.append(
                    .object([
                        ("address", .string(Hex.format(address))),
                        ("frames", .array(result.frames.map(FrameJSON.frame))),
                    ]))
            } else {
                output += Hex.format(address).utf8
                output.append(0x0a)
                if result.frames.isEmpty { output += "??\n??:0:0\n".utf8 }
                for frame in result.frames {
                    output += (frame.function ?? "??").utf8
                    if let offset = frame.symbolOffset { output += " + \(offset)".utf8 }
                    output.append(0x0a)
                    output += (frame.file ?? "??").utf8
                    output += ":\(frame.line):\(frame.column)\n".utf8
                }
                output.append(0x0a)
                if output.count > 1 << 16 {
                    Console.write(output)
                    output.removeAll(keepingCapacity: true)
                }
            }
        }
        Console.write(output)
        if json { Console.out(JSON.render(.array(items))) }
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
        if let offset = frame.symbolOffset { pairs.append(("symbol_offset", .int(Int(offset)))) }
        return .object(pairs)
    }
}
