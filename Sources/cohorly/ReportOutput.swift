import CohorlySymbols

/// Text and JSON renderings of a symbolicated report.
enum ReportOutput {
  typealias Thread = SymbolicateReport.SymbolicatedThread
  typealias Frame = SymbolicateReport.Frame

  static func text(
    report: ReportInput, reason: String, threads: [Thread],
    missing: [(image: LoadedImage, error: SymbolsError)]
  ) -> String {
    var lines: [String] = ["Crash: \(reason)"]
    if let signal = report.signal {
      var text = "Signal: \(signal.name ?? "?") (\(signal.number ?? 0)), code \(signal.code ?? 0)"
      if let address = signal.address { text += ", address \(address)" }
      lines.append(text)
    }
    if let executable = report.executable { lines.append("Executable: \(executable)") }
    if report.complete == false {
      lines.append("Note: the report is incomplete (salvaged from a torn file).")
    }
    for thread in threads {
      lines.append("")
      var title = "Thread \(thread.tid.map(String.init) ?? "?")"
      if let name = thread.name, !name.isEmpty { title += " \"\(name)\"" }
      if thread.crashed { title += " crashed" }
      lines.append(title + ":")
      if thread.frames.isEmpty { lines.append("  (no frames: the thread did not answer)") }
      for frame in thread.frames { lines += frameLines(frame) }
      if thread.truncated { lines.append("  … (truncated)") }
    }
    if !missing.isEmpty {
      lines.append("")
      let names = missing.map { item in
        item.image.path + (item.image.buildId.map { " (build id \(DebugId.codeId($0)))" } ?? "")
      }
      lines.append(
        "Unsymbolicated modules (no usable debug file found): " + names.joined(separator: ", "))
    }
    return lines.joined(separator: "\n")
  }

  private static func frameLines(_ frame: Frame) -> [String] {
    let number = "#\(frame.index)".padded(to: 4)
    let address = frame.address.map(hex16) ?? frame.rawAddress
    let module = frame.image.map { basename($0.path) } ?? "???"
    let head = "\(number)\(address) \(module)"
    guard let result = frame.result, let physical = result.frames.last else {
      if let offset = frame.fileAddress { return ["\(head) + 0x\(String(offset, radix: 16))"] }
      return [head]
    }
    var lines = ["\(head) \(describe(physical))"]
    // Inlined frames indented under their physical frame, from the outermost call inward.
    for (depth, inlined) in result.frames.dropLast().reversed().enumerated() {
      lines.append(String(repeating: " ", count: 6 + 2 * depth) + "[inlined] " + describe(inlined))
    }
    return lines
  }

  private static func describe(_ frame: SymbolicatedFrame) -> String {
    var text = frame.function ?? "??"
    if let offset = frame.symbolOffset { text += " + \(offset)" }
    if let file = frame.file {
      text += " at \(file)"
      if frame.line > 0 { text += ":\(frame.line)" + (frame.column > 0 ? ":\(frame.column)" : "") }
    }
    return text
  }

  static func json(
    report: ReportInput, reason: String, threads: [Thread],
    missing: [(image: LoadedImage, error: SymbolsError)]
  ) -> JSON.Value {
    var crash: [(String, JSON.Value)] = [("reason", .string(reason))]
    if let mechanism = report.mechanism { crash.append(("mechanism", .string(mechanism))) }
    if let signal = report.signal {
      crash.append(
        (
          "signal",
          .object([
            ("number", .int(signal.number ?? 0)), ("name", JSON.string(signal.name)),
            ("code", .int(signal.code ?? 0)), ("address", JSON.string(signal.address)),
          ])
        ))
    }
    let threadValues: [JSON.Value] = threads.map { thread in
      .object([
        ("tid", thread.tid.map(JSON.Value.int) ?? .null),
        ("name", JSON.string(thread.name)),
        ("crashed", .bool(thread.crashed)),
        ("truncated", .bool(thread.truncated)),
        ("frames", .array(thread.frames.map(frameJSON))),
      ])
    }
    let missingValues: [JSON.Value] = missing.map {
      .object([
        ("path", .string($0.image.path)),
        ("build_id", JSON.string($0.image.buildId.map(DebugId.codeId))),
        ("error", .string($0.error.description)),
      ])
    }
    return .object([
      ("crash", .object(crash)),
      ("threads", .array(threadValues)),
      ("unsymbolicated_modules", .array(missingValues)),
    ])
  }

  private static func frameJSON(_ frame: Frame) -> JSON.Value {
    .object([
      ("index", .int(frame.index)),
      ("instruction_addr", .string(frame.address.map(Hex.format) ?? frame.rawAddress)),
      ("module", JSON.string(frame.image?.path)),
      ("image_addr", JSON.string(frame.image.map { Hex.format($0.base) })),
      ("file_address", JSON.string(frame.fileAddress.map(Hex.format))),
      ("symbolicated", .bool(frame.result?.frames.isEmpty == false)),
      ("frames", .array((frame.result?.frames ?? []).map(FrameJSON.frame))),
    ])
  }

  private static func hex16(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits
  }

  private static func basename(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
  }
}
