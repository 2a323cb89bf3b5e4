import CDwarf
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The names and paths a symbolicator has produced, each stored once and referred to by a number: as UTF-8
/// bytes in fixed blocks (for tools that write many frames and should not build or copy a string per frame),
/// and as a Swift string made on first request (for ``SymbolicatedFrame``). Blocks are never grown or moved:
/// a large table does not hold a half-empty doubled buffer, nor two copies while it grows. Names as stored in
/// the symbolicator's mapped files (``add(mapped:)``) are not copied at all.
///
/// Readable names made by demangling can be dropped between batches past a size (``readableNamesLimit``) and
/// are made again when asked for: a long run keeps what one batch needs, not every name it printed.
///
/// Readable names can be demangled at once or, in a batch (``defersDemangling``), handed in stretches to a
/// background thread while the caller goes on looking addresses up: demangling is the costliest step per
/// distinct function, and the only one that does not touch the index.
///
/// Texts are numbered in the order they are added, from 0.
///
/// Not thread-safe, like the symbolicator that owns it; the hot storage opts out of dynamic exclusivity checks
/// (`@exclusivity(unchecked)`): no access to it ever overlaps another (no method hands out `inout` to it).
package final class TextTable {
    /// Where a text's UTF-8 bytes are (in one of the blocks, or in a mapped file).
    struct Span {
        var start: UnsafePointer<UInt8>?
        /// The byte count, or ``dropped`` or ``unmeasured``.
        var count: Int

        /// The count of a readable name whose bytes were dropped (``dropReadableNamesOverLimit()``): `start` is
        /// then the mangled name it is made from again.
        static let dropped = -1
        /// The count of a NUL-terminated name in a mapped file, measured when read (most raw names never are:
        /// text output prints readable names).
        static let unmeasured = -2
        /// The counts of readable names still being made in a closed batch (``TextTable/closeBatch()``):
        /// `pending - slot`, the slot being the name's place among the batch's deferred names (its stretch is
        /// `slot / 64`); `start` is the mangled name.
        static let pending = -3

        /// Where `bytes` are (empty: no start).
        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            self.init(start: bytes.isEmpty ? nil : bytes.baseAddress, count: bytes.count)
        }

        init(start: UnsafePointer<UInt8>?, count: Int) {
            self.start = start
            self.count = count
        }

        /// The bytes, measuring a mapped name (nil start: empty; never asked of a dropped name; for a name still
        /// in the making, the mangled name: read it through ``View`` or after ``demanglePending()``).
        var bytes: UnsafeBufferPointer<UInt8> {
            guard let start, count != Span.dropped else { return UnsafeBufferPointer(start: nil, count: 0) }
            if count == Span.unmeasured || count <= Span.pending {
                return UnsafeBufferPointer(
                    start: start, count: strlen(UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)))
            }
            return UnsafeBufferPointer(start: start, count: count)
        }
    }

    /// Every text's bytes: text `n` is `spans[n]`.
    @exclusivity(unchecked) private var spans = SpanList()
    /// The bytes of paths and names that are kept for the table's life.
    @exclusivity(unchecked) private var kept = ByteBlocks()
    /// The readable names made by demangling (which can be dropped between batches and made again): those made
    /// on the caller's thread and those made on the background thread, each written by its thread alone.
    private let callerNames = DemangledNames()
    private let workerNames = DemangledNames()
    /// The entries whose bytes are in `callerNames` or `workerNames`, with the mangled name each was made from.
    @exclusivity(unchecked) private var readableEntries: [(number: Int32, mangled: UnsafePointer<CChar>)] = []
    /// Strings made so far, by number (grown on the first request: batch tools never make one).
    private var strings: [String?] = []
    private var numbers: [String: Int32] = [:]
    /// Names waiting to be demangled into the entry numbered `number` (while ``defersDemangling``). The
    /// pointers are into the symbolicator's mapped files, alive as long as it is.
    @exclusivity(unchecked) private var pending: [(number: Int32, mangled: UnsafePointer<CChar>)] = []
    /// The full stretches of names of this batch, in order (handed to the background thread when there is one).
    private var submitted: [DemanglingChunk] = []
    /// The stretches of the last closed batch, whose names may still be in the making (read through ``View``).
    private var closed: [DemanglingChunk] = []
    /// The stretches of this batch as the background thread takes them (nil: not started in this batch).
    private var handover: DemanglingHandover?
    private let group = DispatchGroup()
    /// One background thread: the caller's thread keeps looking addresses up on the other core.
    private lazy var worker = DispatchQueue(label: "cohorly.symbols.demangle")
    static let hasSeveralCores = Processors.online > 1
    /// Whether names may be demangled on libdispatch's background thread (default true). The detached crash
    /// sender turns it off: it runs before `main`, where in a statically linked program libdispatch is not started
    /// yet and work handed to a queue never runs (the caller then makes every name itself, and waits for nothing).
    package static let demanglesInBackground = Atomic<Bool>(true)

    /// Whether ``add(demangling:)`` only reserves an entry, to be filled by ``demanglePending()``.
    var defersDemangling = false

    /// Whether ``add(demangling:)`` keeps names as they are, mangled, for a caller that demangles them itself (the
    /// symbol cache's writer): nothing is demangled, now or in the background. Once it is turned off, the names so
    /// kept read as not made yet, and are made when a frame refers to them again (as names dropped past
    /// ``readableNamesLimit`` are).
    var keepsNamesMangled = false {
        didSet {
            guard !keepsNamesMangled else { return }
            for number in keptMangled {
                spans[Int(number)] = Span(start: spans.starts[Int(number)], count: Span.dropped)
            }
            keptMangled.removeAll()
        }
    }
    /// The entries whose names were kept mangled (``keepsNamesMangled``).
    @exclusivity(unchecked) private var keptMangled: [Int32] = []

    /// How many bytes of readable names ``dropReadableNamesOverLimit()`` lets the table keep. Past it, a long
    /// run (a batch tool over a binary with 100,000 functions) drops them, and makes again only those asked
    /// for again, rather than holding every name it ever printed (a 50,000-address run over a 3,000-function
    /// Swift binary keeps 0.4 MB; the statically linked runtime's names average 140 bytes: 1 MiB holds 7,500).
    var readableNamesLimit = 1 << 20

    /// The points at which ``testHook`` is called.
    package enum TestPoint: Sendable {
        /// On the background thread, before it takes its next stretch of names: returning false ends its task
        /// (the stretches left are made by the caller's thread as they are read).
        case takingStretch
        /// On the caller's thread, before it waits for the background thread's task to end (the answer is not used).
        case waitingForTask
    }

    /// For tests only, nil otherwise (then one check per stretch and per wait): lets a test hold the background
    /// thread between stretches and see when the caller waits for it. Set before the batch: its background task
    /// takes the hook it finds when started.
    package var testHook: (@Sendable (TestPoint) -> Bool)?

    init() {}

    deinit {
        handover?.close()  // a batch left open (no `demanglePending`) must not keep its task waiting
        waitForBackgroundTask()  // a chunk still running reads the symbolicator's names: never outlive it
        kept.removeAll()
    }

    /// Ends the demangling of deferred names and waits for the background thread's task to end: after it, no
    /// thread reads the names in the owner's mapped files. The names no thread has taken yet are not made (nobody
    /// will read them: they read as the mangled names they are made from); the one the background thread is making
    /// is waited for. The owner calls it from its `deinit`, before its mapped files can go (its stored properties,
    /// the files among them, are destroyed after `deinit`, and this table may be destroyed after them: its own
    /// `deinit` comes too late).
    package func abandonBackgroundWork() {
        handover?.close()
        handover = nil
        let chunks = closed + submitted
        for chunk in chunks { chunk.abandon() }
        waitForBackgroundTask()
        for chunk in chunks {
            for (index, item) in chunk.items.enumerated() {
                fill(item.number, item.mangled, chunk.isMade(index) ? chunk.results[index] : nil)
            }
        }
        for item in pending { fill(item.number, item.mangled, nil) }
        closed.removeAll()
        submitted.removeAll()
        pending.removeAll()
    }

    /// Waits until the background task of the last batch has ended.
    private func waitForBackgroundTask() {
        _ = testHook?(.waitingForTask)
        group.wait()
    }

    /// The bytes of the readable names kept now.
    var readableNamesSize: Int { callerNames.size + workerNames.size }

    /// The number of `text`, adding it when it is new (for texts met again and again, such as paths).
    func number(of text: String) -> Int32 {
        if let known = numbers[text] { return known }
        var copy = text
        let number = copy.withUTF8 { add(Span(kept.store($0))) }
        numbers[text] = number
        return number
    }

    /// Adds a NUL-terminated text of one of the symbolicator's mapped files (a name in `.strtab` or
    /// `.debug_str`, alive as long as the symbolicator, like the names waiting to be demangled) under a new
    /// number, without copying it.
    func add(mapped text: UnsafePointer<CChar>) -> Int32 {
        let number = Int32(spans.count)
        spans.append(Span(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: Span.unmeasured))
        return number
    }

    /// Adds the readable form of a NUL-terminated linkage name (see ``Demangler``), now or, while
    /// ``defersDemangling``, by the next ``demanglePending()``. `mangled` is a name of the symbolicator's mapped
    /// files, as for ``add(mapped:)``: a deferred name that is not a Swift name is kept where it is. Deferred
    /// names are demangled on a background thread, a stretch at a time, while the caller goes on.
    func add(demangling mangled: UnsafePointer<CChar>) -> Int32 {
        let number = Int32(spans.count)
        spans.append(Span(start: nil, count: 0))
        demangle(number, mangled)
        return number
    }

    /// Makes the readable name of entry `number` from `mangled`: now, or while ``defersDemangling`` by the
    /// next ``demanglePending()`` (handing stretches of names to the background thread meanwhile).
    private func demangle(_ number: Int32, _ mangled: UnsafePointer<CChar>) {
        if keepsNamesMangled {
            fill(number, mangled, nil)
            keptMangled.append(number)
            return
        }
        guard defersDemangling else {
            fill(number, mangled, callerNames.demangle(mangled))
            return
        }
        // The stretch of a slot is its place in `closed` once the batch is closed (after any batch closed before).
        let slot = (closed.count + submitted.count) * DemanglingChunk.capacity + pending.count
        let mangledBytes = UnsafeRawPointer(mangled).assumingMemoryBound(to: UInt8.self)
        spans[Int(number)] = Span(start: mangledBytes, count: Span.pending - slot)
        pending.append((number, mangled))
        if pending.count == DemanglingChunk.capacity {
            let chunk = DemanglingChunk(pending)
            pending.removeAll(keepingCapacity: true)
            submitted.append(chunk)
            guard TextTable.hasSeveralCores else { return }
            if handover == nil { startBackgroundTask() }
            handover?.append(chunk)
        }
    }

    /// Starts the background thread's task for this batch (if not started yet, and there is a second core), to
    /// take the stretches of names as they come until the batch is closed. Called by a batch tool before a batch of
    /// many addresses: the first task a thread runs started up to milliseconds after it was asked for (measured:
    /// often after the lookups had ended), so it is asked for before the lookups, and parks until the first
    /// stretch (see `DemanglingHandover`). One task a batch, not one a stretch: a thread parked between any two
    /// stretches was at times woken as late.
    func startBackgroundTask() {
        guard TextTable.hasSeveralCores, TextTable.demanglesInBackground.load(ordering: .relaxed), handover == nil
        else { return }
        var beforeEachStretch: (@Sendable () -> Bool)?
        if let hook = testHook { beforeEachStretch = { hook(.takingStretch) } }
        let started = DemanglingHandover(beforeEachStretch: beforeEachStretch)
        handover = started
        let names = workerNames
        worker.async(group: group) { started.run(into: names) }
    }

    /// Points entry `number` at its readable name: `made` (in one of the `DemangledNames`), or when nil (not a
    /// Swift or C++ name) `mangled` itself, readable as it is where it is (in a mapped file).
    private func fill(_ number: Int32, _ mangled: UnsafePointer<CChar>, _ made: UnsafeBufferPointer<UInt8>?) {
        guard let made else {
            let bytes = UnsafeRawPointer(mangled).assumingMemoryBound(to: UInt8.self)
            spans[Int(number)] = Span(start: bytes, count: Span.unmeasured)
            return
        }
        spans[Int(number)] = Span(made)
        readableEntries.append((number, mangled))
    }

    /// Drops every readable name made by demangling when they take more than ``readableNamesLimit`` bytes. The
    /// entries keep their numbers; ``revive(_:)`` makes a name again when a frame refers to it. Call only
    /// between batches: no span read before may be read after.
    func dropReadableNamesOverLimit() {
        guard readableNamesSize > readableNamesLimit, pending.isEmpty, submitted.isEmpty, closed.isEmpty else {
            return
        }
        for entry in readableEntries {
            let bytes = UnsafeRawPointer(entry.mangled).assumingMemoryBound(to: UInt8.self)
            spans[Int(entry.number)] = Span(start: bytes, count: Span.dropped)
        }
        readableEntries.removeAll(keepingCapacity: true)
        callerNames.removeAll()
        waitForBackgroundTask()  // (it made every name it took already)
        workerNames.removeAll()
    }

    /// Makes the readable name of entry `number` again when it was dropped (as ``add(demangling:)`` does: now,
    /// or deferred while ``defersDemangling``).
    func revive(_ number: Int32) {
        guard number >= 0, spans.counts[Int(number)] == Span.dropped, let start = spans.starts[Int(number)] else {
            return
        }
        demangle(number, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self))
    }

    /// Ends the batch of deferred names: the background thread makes what it has been handed and takes no more;
    /// the names not yet made are made when ``View`` reads them (on this thread, unless the background thread
    /// has them in hand) or by ``demanglePending()``. A batch tool writes its output meanwhile, while the
    /// background thread works through the rest.
    func closeBatch() {
        handover?.close()
        handover = nil
        submitted.append(DemanglingChunk(pending))
        pending.removeAll()
        closed += submitted
        submitted.removeAll()
    }

    /// Fills the entries of every name deferred so far: closes the batch, demangles on this thread the names the
    /// background thread has not taken (from the last stretch: it takes them from the first), waits for the
    /// one it is making (a thread descheduled for a while holds up one name, not a stretch), and points the
    /// entries at the readable names.
    func demanglePending() {
        if !pending.isEmpty || !submitted.isEmpty || handover != nil { closeBatch() }
        guard !closed.isEmpty else { return }
        for chunk in closed.reversed() { chunk.demangle(into: callerNames, fromTheEnd: true) }
        for chunk in closed {
            while !chunk.isComplete { sched_yield() }
        }
        for chunk in closed {
            for (index, item) in chunk.items.enumerated() { fill(item.number, item.mangled, chunk.results[index]) }
        }
        closed.removeAll()
    }

    private func add(_ span: Span) -> Int32 {
        let number = Int32(spans.count)
        spans.append(span)
        return number
    }

    /// The bytes of text `number`, which stay where they are while the table lives: a path, or a name kept as
    /// it is in a mapped file (while ``keepsNamesMangled``, every name added). Not for a name being demangled
    /// or one that can be dropped (its bytes may go).
    func stableBytes(_ number: Int32) -> UnsafeBufferPointer<UInt8> {
        spans[Int(number)].bytes
    }

    /// The text numbered `number`, or nil for -1.
    package func string(_ number: Int32) -> String? {
        guard number >= 0 else { return nil }
        if strings.count < spans.count {
            strings.append(contentsOf: repeatElement(nil, count: spans.count - strings.count))
        }
        if let made = strings[Int(number)] { return made }
        if spans[Int(number)].count <= Span.pending { demanglePending() }
        if spans[Int(number)].count == Span.dropped {
            let wasDeferring = defersDemangling
            defersDemangling = false
            revive(number)
            defersDemangling = wasDeferring
        }
        let made = String(decoding: spans[Int(number)].bytes, as: UTF8.self)
        strings[Int(number)] = made
        return made
    }

    /// Calls `body` with a view of every text so far (the table must not grow meanwhile). Names of a closed
    /// batch still in the making are made as they are read.
    package func withView<Result>(_ body: (View) throws -> Result) rethrows -> Result {
        try spans.starts.withUnsafeBufferPointer { starts in
            try spans.counts.withUnsafeBufferPointer { counts in
                try body(View(starts: starts, counts: counts, closed: closed, names: callerNames))
            }
        }
    }

    /// The texts' bytes as they are while ``withView(_:)`` runs: reading them retains and copies nothing (a name
    /// of a closed batch not made yet is made then, on the reading thread, or waited for when the background
    /// thread is making it).
    package struct View {
        let starts: UnsafeBufferPointer<UnsafePointer<UInt8>?>
        let counts: UnsafeBufferPointer<Int32>
        fileprivate let closed: [DemanglingChunk]
        let names: DemangledNames

        /// The UTF-8 bytes of the text numbered `number` (empty for -1).
        package subscript(number: Int32) -> UnsafeBufferPointer<UInt8> {
            guard number >= 0 else { return UnsafeBufferPointer(start: nil, count: 0) }
            let count = Int(counts[Int(number)])
            guard count <= Span.pending else { return Span(start: starts[Int(number)], count: count).bytes }
            let slot = Span.pending - count
            let chunk = closed[slot / DemanglingChunk.capacity]
            return chunk.readable(at: slot % DemanglingChunk.capacity, makingWith: names)
                ?? Span(start: starts[Int(number)], count: Span.unmeasured).bytes
        }
    }

    /// The spans as two arrays (12 bytes a text, not a struct's 16: a table may hold 200,000 of them).
    private struct SpanList {
        var starts: [UnsafePointer<UInt8>?] = []
        var counts: [Int32] = []

        var count: Int { starts.count }

        subscript(number: Int) -> Span {
            get { Span(start: starts[number], count: Int(counts[number])) }
            set {
                starts[number] = newValue.start
                counts[number] = Int32(clamping: newValue.count)
            }
        }

        mutating func append(_ span: Span) {
            starts.append(span.start)
            counts.append(Int32(clamping: span.count))
        }
    }
}

/// A stretch of up to 64 names to demangle and the readable names made of them. Each name is taken by one thread
/// (a bit of `taken` set first by it) and made into that thread's ``DemangledNames``; its result is read only once
/// its bit of `made` is set (acquiring what the maker released), so no result is touched by two threads at once
/// (hence `@unchecked Sendable`). The background thread takes names from the first, the lookup thread from the
/// last, or the very name it needs to write.
final class DemanglingChunk: @unchecked Sendable {
    /// Names a stretch holds at most: one bit each in a 64-bit word.
    static let capacity = 64

    let items: [(number: Int32, mangled: UnsafePointer<CChar>)]
    /// Per item: its readable name, nil when the name is not mangled (or not demangled).
    let results: UnsafeMutableBufferPointer<UnsafeBufferPointer<UInt8>?>
    private let taken = Atomic<UInt64>(0)
    private let made = Atomic<UInt64>(0)
    /// One bit per item.
    private let all: UInt64

    init(_ items: [(number: Int32, mangled: UnsafePointer<CChar>)]) {
        precondition(items.count <= Self.capacity)
        self.items = items
        all = items.count == Self.capacity ? UInt64.max : (1 << UInt64(items.count)) - 1
        results = .allocate(capacity: items.count)
        results.initialize(repeating: nil)
    }

    /// Demangles the items no other thread has taken, one at a time, into `names` (the calling thread's).
    func demangle(into names: DemangledNames, fromTheEnd: Bool = false) {
        while true {
            let free = all & ~taken.load(ordering: .relaxed)
            guard free != 0 else { return }
            let index = fromTheEnd ? 63 - free.leadingZeroBitCount : free.trailingZeroBitCount
            make(index, into: names)
        }
    }

    /// The readable name of item `index` (nil: not mangled): made now into `names` unless another thread has
    /// taken it, then waited for.
    func readable(at index: Int, makingWith names: DemangledNames) -> UnsafeBufferPointer<UInt8>? {
        let bit = UInt64(1) << UInt64(index)
        if made.load(ordering: .acquiring) & bit == 0 && !make(index, into: names) {
            while made.load(ordering: .acquiring) & bit == 0 { sched_yield() }
        }
        return results[index]
    }

    /// Makes item `index` into `names` when no other thread has taken it; false when one has.
    @discardableResult private func make(_ index: Int, into names: DemangledNames) -> Bool {
        let bit = UInt64(1) << UInt64(index)
        guard taken.bitwiseOr(bit, ordering: .acquiringAndReleasing).oldValue & bit == 0 else { return false }
        results[index] = names.demangle(items[index].mangled)
        made.bitwiseOr(bit, ordering: .releasing)
        return true
    }

    /// Whether every item is made (their results may then be read).
    var isComplete: Bool { made.load(ordering: .acquiring) == all }

    /// Whether item `index` is made (its result may then be read).
    func isMade(_ index: Int) -> Bool { made.load(ordering: .acquiring) & (UInt64(1) << UInt64(index)) != 0 }

    /// Takes every item no thread has taken yet, to leave it unmade: a thread then finds nothing more to make here.
    func abandon() { taken.bitwiseOr(all, ordering: .acquiringAndReleasing) }

    deinit { results.deallocate() }
}

/// The stretches of one batch, handed to the background thread as they are made: its task takes them in order
/// and ends once the batch is closed and every stretch handed over is taken. Between stretches it stays awake a
/// little (yielding its core; the lookup thread hands one over every few tens of microseconds, and a parked
/// thread was at times woken only milliseconds later, after the lookups: measured), then parks until the next
/// stretch or the close wakes it (so that it never spins for long on a core the lookup thread may need: a virtual
/// machine's second core is not always there). The lookup thread appends and closes; the background thread reads.
private final class DemanglingHandover: Sendable {
    private let chunks: Mutex<[DemanglingChunk]>
    /// How many stretches are appended (released after each append, so a count read covers its stretches).
    private let count = Atomic<Int>(0)
    private let isOpen = Atomic<Bool>(true)
    /// Whether the task is parked (or about to), waiting for `wakeUp`.
    private let isParked = Atomic<Bool>(false)
    private let wakeUp = DispatchSemaphore(value: 0)
    /// How long the task waits awake for the next stretch before it parks.
    private static let awakeNanoseconds = 100_000
    /// ``TextTable/testHook`` at ``TextTable/TestPoint/takingStretch``, or nil (outside tests).
    private let beforeEachStretch: (@Sendable () -> Bool)?

    init(beforeEachStretch: (@Sendable () -> Bool)?) {
        chunks = Mutex([])
        self.beforeEachStretch = beforeEachStretch
    }

    func append(_ chunk: DemanglingChunk) {
        chunks.withLock { $0.append(chunk) }
        count.wrappingAdd(1, ordering: .sequentiallyConsistent)
        wakeIfParked()
    }

    /// No more stretches: the task ends once it has taken those appended.
    func close() {
        isOpen.store(false, ordering: .sequentiallyConsistent)
        wakeIfParked()
    }

    /// Wakes the task when it parked: the one that clears the flag signals (or, for the task itself, does not
    /// wait), so every wait is matched by one signal.
    private func wakeIfParked() {
        if isParked.load(ordering: .sequentiallyConsistent)
            && isParked.exchange(false, ordering: .sequentiallyConsistent)
        {
            wakeUp.signal()
        }
    }

    /// Whether there is nothing to do for now: no stretch untaken, and the batch open.
    private func isIdle(_ taken: Int) -> Bool {
        taken >= count.load(ordering: .sequentiallyConsistent) && isOpen.load(ordering: .sequentiallyConsistent)
    }

    /// The background thread's task: demangles each stretch's names not taken by the lookup thread.
    func run(into names: DemangledNames) {
        var taken = 0
        var idleSince: UInt64?
        while true {
            let wasOpen = isOpen.load(ordering: .sequentiallyConsistent)
            if taken < count.load(ordering: .sequentiallyConsistent) {
                if let beforeEachStretch, !beforeEachStretch() { return }
                let chunk = chunks.withLock { $0[taken] }
                taken += 1
                chunk.demangle(into: names)
                idleSince = nil
            } else if !wasOpen {
                return  // closed before the count was read: every stretch appended was counted
            } else if let since = idleSince, Self.now() - since > UInt64(Self.awakeNanoseconds) {
                isParked.store(true, ordering: .sequentiallyConsistent)
                // A stretch or the close that came meanwhile: the lookup thread may have seen the flag (then it
                // signals, and the signal is taken here), or not (then the flag is taken back).
                if !isIdle(taken) && isParked.exchange(false, ordering: .sequentiallyConsistent) { continue }
                wakeUp.wait()
                idleSince = nil
            } else {
                if idleSince == nil { idleSince = Self.now() }
                sched_yield()
            }
        }
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(truncatingIfNeeded: time.tv_sec) &* 1_000_000_000 &+ UInt64(truncatingIfNeeded: time.tv_nsec)
    }
}

/// Readable names made by one thread at a time, written straight into fixed blocks that are never grown or moved
/// (`swift_demangle` is handed the room left in the current block): no `malloc`, copy and `free` per name, nor a
/// name allocated on one thread and freed on another.
final class DemangledNames: @unchecked Sendable {
    private var blocks = ByteBlocks()
    /// Below this much room a block is left for a new one (the longest Swift names of a large binary run to a few
    /// thousand bytes; a name that does not fit is made again in a block of its size).
    private static let leastRoom = 4096

    init() {}

    deinit { blocks.removeAll() }

    /// The bytes of the names made since the last ``removeAll()``.
    var size: Int { blocks.size }

    /// The readable form of a NUL-terminated linkage name (as ``Demangler/readableCopy(_:)`` makes it) stored
    /// here, or nil when the name is not mangled or cannot be demangled.
    func demangle(_ mangled: UnsafePointer<CChar>) -> UnsafeBufferPointer<UInt8>? {
        let length = strlen(mangled)
        guard Demangler.hasSwiftPrefix(mangled, length) else {
            guard let made = Demangler.readableCopy(mangled) else { return nil }
            defer { free(made) }
            return made.withMemoryRebound(to: UInt8.self, capacity: 1) {
                blocks.store(UnsafeBufferPointer(start: $0, count: strlen(made)))
            }
        }
        var room = blocks.room(for: Self.leastRoom)
        var capacity = room.capacity
        guard demangle(mangled, length, into: room.start, &capacity) else { return nil }
        if capacity > room.capacity {  // cut short: `capacity` is now the size needed
            room = blocks.room(for: capacity)
            guard demangle(mangled, length, into: room.start, &capacity) else { return nil }
        }
        return blocks.commit(strlen(UnsafeRawPointer(room.start).assumingMemoryBound(to: CChar.self)))
    }

    /// `swift_demangle` into `capacity` bytes at `target` (NUL-terminated, cut short when they are too few, and
    /// then `capacity` set to the size needed); false when the name is not a Swift name it can demangle.
    private func demangle(
        _ mangled: UnsafePointer<CChar>, _ length: Int, into target: UnsafeMutablePointer<UInt8>,
        _ capacity: inout Int
    ) -> Bool {
        target.withMemoryRebound(to: CChar.self, capacity: capacity) {
            swift_demangle(mangled, length, $0, &capacity, 0) != nil
        }
    }

    /// Frees every name (what pointed into them must not be read again).
    func removeAll() { blocks.removeAll() }
}

/// Bytes in fixed blocks (each `blockSize`, or one text's size when larger) that are never grown or moved: a large
/// table does not hold a half-empty doubled buffer, nor two copies while it grows. Texts are copied in
/// (``store(_:)``) or written in place (``room(for:)``, then ``commit(_:)``).
struct ByteBlocks {
    private var blocks: [(start: UnsafeMutablePointer<UInt8>, capacity: Int)] = []
    /// Bytes used in the last block.
    private var used = 0
    /// The bytes of the texts stored (the blocks hold at most one block more).
    private(set) var size = 0
    private static let blockSize = 1 << 16

    /// Where at least `count` bytes can be written next (a new block when the last has less room), and how many.
    mutating func room(for count: Int) -> (start: UnsafeMutablePointer<UInt8>, capacity: Int) {
        if blocks.isEmpty || blocks[blocks.count - 1].capacity - used < count {
            let capacity = max(Self.blockSize, count)
            blocks.append((.allocate(capacity: capacity), capacity))
            used = 0
        }
        let last = blocks[blocks.count - 1]
        return (last.start + used, last.capacity - used)
    }

    /// Keeps the `count` bytes written at the last ``room(for:)`` and returns where they are.
    mutating func commit(_ count: Int) -> UnsafeBufferPointer<UInt8> {
        let start = blocks[blocks.count - 1].start + used
        used += count
        size += count
        return UnsafeBufferPointer(start: start, count: count)
    }

    /// Copies `bytes` into the blocks and returns where they are.
    mutating func store(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return UnsafeBufferPointer(start: nil, count: 0) }
        room(for: bytes.count).start.update(from: source, count: bytes.count)
        return commit(bytes.count)
    }

    /// Frees every block (what pointed into them must not be read again).
    mutating func removeAll() {
        for block in blocks { block.start.deallocate() }
        blocks.removeAll()
        used = 0
        size = 0
    }
}
