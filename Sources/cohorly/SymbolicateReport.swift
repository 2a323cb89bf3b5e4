import CohorlySymbols

/// `cohorly symbolicate REPORT.json`: the report printed like a Swift backtrace, crash reason first.
enum SymbolicateReport {
  static func run(path: String, debugDirs: [String], json: Bool) -> ExitStatus {
    let report: ReportInput
    do {
      report = try ReportInput.load(path: path)
    } catch {
      Console.error("cohorly: \(error.reason)")
      return .failure
    }
    let images = (report.modules ?? []).compactMap { module -> LoadedImage? in
      guard let base = Hex.parse(module.base), let size = Hex.parse(module.size) else { return nil }
      let buildId = module.buildId.flatMap { $0.isEmpty ? nil : DebugId.buildId(hex: $0) }
      return LoadedImage(path: module.path, base: base, size: size, buildId: buildId)
    }
    let symbolicator = ImageSymbolicator(
      images: images, locator: DebugFileLocator(searchPaths: debugDirs))
    var threads: [SymbolicatedThread] = []
    if let crashed = report.crashedThread {
      threads.append(symbolicate(crashed, crashed: true, symbolicator))
    }
    for thread in report.threads ?? [] {
      threads.append(symbolicate(thread, crashed: false, symbolicator))
    }

    let reason = crashReason(report, crashedFrames: threads.first(where: \.crashed)?.frames ?? [])
    let missing = symbolicator.failures
    if json {
      Console.out(
        JSON.render(
          ReportOutput.json(report: report, reason: reason, threads: threads, missing: missing)))
    } else {
      Console.out(
        ReportOutput.text(report: report, reason: reason, threads: threads, missing: missing))
    }
    return .success
  }

  /// One report frame after lookup.
  struct Frame {
    var index: Int
    var address: UInt64?
    var rawAddress: String
    var image: LoadedImage?
    var fileAddress: UInt64?
    var result: SymbolicatedAddress?
  }

  struct SymbolicatedThread {
    var tid: Int?
    var name: String?
    var crashed: Bool
    var truncated: Bool
    var frames: [Frame]
  }

  static func symbolicate(
    _ thread: ReportInput.Thread, crashed: Bool, _ symbolicator: ImageSymbolicator
  )
    -> SymbolicatedThread
  {
    var frames: [Frame] = []
    for (index, text) in thread.frames.enumerated() {
      guard let address = Hex.parse(text) else {
        frames.append(Frame(index: index, rawAddress: text))
        continue
      }
      // Frame 0 is the exact PC; every other frame is a return address.
      let lookup = symbolicator.symbolicate(address, isReturnAddress: index > 0)
      frames.append(
        Frame(
          index: index, address: address, rawAddress: text,
          image: lookup.imageIndex.map { symbolicator.images[$0] }, fileAddress: lookup.fileAddress,
          result: lookup.result))
    }
    return SymbolicatedThread(
      tid: thread.tid, name: thread.name, crashed: crashed || thread.crashed == true,
      truncated: thread.truncated == true, frames: frames)
  }

  /// The reason, most specific first: the Swift fatal-error message, the uncaught C++ exception, a
  /// `Swift runtime failure:` inline frame at the crash site, then the signal.
  static func crashReason(_ report: ReportInput, crashedFrames: [Frame]) -> String {
    if let message = report.message, !message.isEmpty { return message }
    if let cxx = report.cxx {
      return "uncaught C++ exception \(cxx.type ?? "of unknown type")"
        + (cxx.what.map { ": \($0)" } ?? "")
    }
    if let failure = crashedFrames.first?.result?.swiftRuntimeFailure {
      return "Swift runtime failure: \(failure)"
    }
    if let signal = report.signal {
      var text = signal.name ?? "signal \(signal.number ?? 0)"
      if let address = signal.address { text += " at \(address)" }
      return text
    }
    return "unknown"
  }
}
