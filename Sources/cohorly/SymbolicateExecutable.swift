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
    var output = ""
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
        var text = Hex.format(address) + "\n"
        if result.frames.isEmpty { text += "??\n??:0:0\n" }
        for frame in result.frames {
          var name = frame.function ?? "??"
          if let offset = frame.symbolOffset { name += " + \(offset)" }
          text += name + "\n" + (frame.file ?? "??") + ":\(frame.line):\(frame.column)\n"
        }
        output += text + "\n"
        if output.utf8.count > 1 << 16 {
          Console.write(output)
          output = ""
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
