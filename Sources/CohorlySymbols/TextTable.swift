import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The names and paths a symbolicator has produced, each stored once and referred to by a number: as UTF-8
/// bytes in fixed blocks (for tools that write many frames and should not build or copy a string per frame),
/// and as a Swift string made on first request (for ``SymbolicatedFrame``). Blocks are never grown or moved:
/// a large table does not hold a half-empty doubled buffer, nor two copies while it grows. Names as stored in
/// the symbolicator's mapped files (``add(mapped:)``) are not copied at all.
///
/// Readable names can be demangled at once or, in a batch (``defersDemangling``), handed in stretches to a
/// background thread while the caller goes on looking addresses up: demangling is the costliest step per
/// distinct function, and the only one that does not touch the index.
///
/// Not thread-safe, like the symbolicator that owns it; the hot storage opts out of dynamic exclusivity checks
/// (`@exclusivity(unchecked)`): no access to it ever overlaps another (no method hands out `inout` to it).
package final class TextTable {
    /// Where a text's UTF-8 bytes are (in one of `blocks`).
    struct Span {
        var start: UnsafePointer<UInt8>?
        var count: Int
    }

    /// Every text's bytes: text `n` is `spans[n]`.
    @exclusivity(unchecked) private var spans: [Span] = []
    /// The blocks the bytes are copied into (each `blockSize`, or one text's size when larger), and how much
    /// of the last is used.
    private var blocks: [UnsafeMutableBufferPointer<UInt8>] = []
    private var lastBlockUsed = 0
    private static let blockSize = 1 << 16
    /// Strings made so far, by number (grown on the first request: batch tools never make one).
    private var strings: [String?] = []
    private var numbers: [String: Int32] = [:]
    /// Names waiting to be demangled into the entry numbered `number` (while ``defersDemangling``). The
    /// pointers are into the symbolicator's mapped files, alive as long as it is.
    private var pending: [(number: Int32, mangled: UnsafePointer<CChar>)] = []
    /// Stretches of names handed to the background thread, in order; theirs until `group` is waited for.
    private var submitted: [DemanglingChunk] = []
    private let group = DispatchGroup()
    /// One background thread: the caller's thread keeps looking addresses up on the other core.
    private lazy var worker = DispatchQueue(label: "cohorly.symbols.demangle")
    private static let hasSeveralCores = sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1
    private static let chunkSize = 256

    /// Whether ``add(demangling:)`` only reserves an entry, to be filled by ``demanglePending()``.
    var defersDemangling = false

    init() {}

    deinit {
        group.wait()  // a chunk still running reads the symbolicator's names: never outlive it
        for block in blocks { block.deallocate() }
    }

    /// Copies `bytes` into the blocks and returns where they are.
    private func store(_ bytes: UnsafeBufferPointer<UInt8>) -> Span {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return Span(start: nil, count: 0) }
        if blocks.isEmpty || blocks[blocks.count - 1].count - lastBlockUsed < bytes.count {
            blocks.append(.allocate(capacity: max(TextTable.blockSize, bytes.count)))
            lastBlockUsed = 0
        }
        guard let base = blocks[blocks.count - 1].baseAddress else { return Span(start: nil, count: 0) }
        let target = base + lastBlockUsed
        target.update(from: source, count: bytes.count)
        lastBlockUsed += bytes.count
        return Span(start: UnsafePointer(target), count: bytes.count)
    }

    /// The number of `text`, adding it when it is new (for texts met again and again, such as paths).
    func number(of text: String) -> Int32 {
        if let known = numbers[text] { return known }
        var copy = text
        let number = copy.withUTF8 { add($0) }
        numbers[text] = number
        return number
    }

    /// Adds a NUL-terminated text under a new number, without looking for it first (for texts the caller
    /// already keeps unique, such as names cached per symbol: hashing long mangled names costs more than
    /// storing a rare duplicate twice).
    func add(cString text: UnsafePointer<CChar>) -> Int32 {
        text.withMemoryRebound(to: UInt8.self, capacity: 1) {
            add(UnsafeBufferPointer(start: $0, count: strlen(text)))
        }
    }

    /// Adds a NUL-terminated text of one of the symbolicator's mapped files (a name in `.strtab` or
    /// `.debug_str`, alive as long as the symbolicator, like the names waiting to be demangled) under a new
    /// number, without copying it.
    func add(mapped text: UnsafePointer<CChar>) -> Int32 {
        let number = Int32(spans.count)
        spans.append(Span(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text)))
        return number
    }

    /// Adds the readable form of a NUL-terminated linkage name (see ``Demangler``), now or, while
    /// ``defersDemangling``, by the next ``demanglePending()``. `mangled` is a name of the symbolicator's mapped
    /// files, as for ``add(mapped:)``: a deferred name that is not a Swift name is kept where it is. Deferred
    /// names are demangled on a background thread, a stretch at a time, while the caller goes on.
    func add(demangling mangled: UnsafePointer<CChar>) -> Int32 {
        guard defersDemangling else { return Demangler.withReadable(mangled) { add(cString: $0) } }
        let number = Int32(spans.count)
        spans.append(Span(start: nil, count: 0))
        pending.append((number, mangled))
        if pending.count >= TextTable.chunkSize && TextTable.hasSeveralCores {
            let chunk = DemanglingChunk(pending)
            pending.removeAll(keepingCapacity: true)
            submitted.append(chunk)
            worker.async(group: group) { chunk.demangle() }
        }
        return number
    }

    /// Fills the entries of every name deferred so far: demangles the last stretch on this thread, waits for
    /// the background thread, and copies the readable names in.
    func demanglePending() {
        let last = DemanglingChunk(pending)
        pending.removeAll()
        last.demangle()
        group.wait()
        for chunk in submitted + [last] {
            for (index, item) in chunk.items.enumerated() {
                guard let text = chunk.results[index] else {
                    // Not a Swift name: readable as it is, where it is (in a mapped file).
                    let mangled = UnsafeRawPointer(item.mangled).assumingMemoryBound(to: UInt8.self)
                    spans[Int(item.number)] = Span(start: mangled, count: strlen(item.mangled))
                    continue
                }
                spans[Int(item.number)] = text.withMemoryRebound(to: UInt8.self, capacity: 1) {
                    store(UnsafeBufferPointer(start: $0, count: strlen(text)))
                }
            }
        }
        submitted.removeAll()
    }

    private func add(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        let number = Int32(spans.count)
        spans.append(store(bytes))
        return number
    }

    /// The text numbered `number`, or nil for -1.
    package func string(_ number: Int32) -> String? {
        guard number >= 0 else { return nil }
        if strings.count < spans.count {
            strings.append(contentsOf: repeatElement(nil, count: spans.count - strings.count))
        }
        if let made = strings[Int(number)] { return made }
        let span = spans[Int(number)]
        let made = String(decoding: UnsafeBufferPointer(start: span.start, count: span.count), as: UTF8.self)
        strings[Int(number)] = made
        return made
    }

    /// Calls `body` with a read-only view of every text so far (the table must not grow meanwhile).
    package func withView<Result>(_ body: (View) throws -> Result) rethrows -> Result {
        try spans.withUnsafeBufferPointer { spans in try body(View(spans: spans)) }
    }

    /// The texts' bytes as they are while ``withView(_:)`` runs: reading them retains and copies nothing.
    package struct View {
        let spans: UnsafeBufferPointer<Span>

        /// The UTF-8 bytes of the text numbered `number` (empty for -1).
        package subscript(number: Int32) -> UnsafeBufferPointer<UInt8> {
            guard number >= 0 else { return UnsafeBufferPointer(start: nil, count: 0) }
            let span = spans[Int(number)]
            return UnsafeBufferPointer(start: span.start, count: span.count)
        }
    }
}

/// A stretch of names to demangle and the readable names made of them (memory from `malloc`, freed with the
/// chunk). Handed to one thread at a time: the background thread owns it from `async` until the table waits
/// for the group, so it is never touched by two threads at once (hence `@unchecked Sendable`).
private final class DemanglingChunk: @unchecked Sendable {
    let items: [(number: Int32, mangled: UnsafePointer<CChar>)]
    let results: UnsafeMutableBufferPointer<UnsafeMutablePointer<CChar>?>

    init(_ items: [(number: Int32, mangled: UnsafePointer<CChar>)]) {
        self.items = items
        results = .allocate(capacity: items.count)
        results.initialize(repeating: nil)
    }

    func demangle() {
        for (index, item) in items.enumerated() { results[index] = Demangler.readableCopy(item.mangled) }
    }

    deinit {
        for result in results { free(result) }
        results.deallocate()
    }
}
