import CDwarf
import CZlib
import CZstd
import CohorlyCrashModel
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The names part of a symbol cache: each name's flags, and the names (readable and raw) in compressed blocks
/// (zstd; zlib when libzstd cannot be loaded: ``SymbolCacheFormat/Version``). Demangling and compressing are much
/// of the writer's work, so each block is made on a thread of its own (``Maker``'s lanes) as soon as its names are
/// numbered, while the writer goes on with the rows: the writer hands over linkage names as they are, and the
/// block's thread demangles them.
enum SymbolCacheNames {
    /// A name as the writer numbers it: its raw (linkage) form, possibly empty, NUL-terminated (as the block
    /// stores it), and its readable form, or nil when that is the raw form demangled (as
    /// ``Demangler/readableCopy(_:)`` makes it, with the block).
    struct Name: Sendable {
        var readable: [UInt8]?
        var rawWithNUL: [UInt8]
    }

    /// A block of names made: their flags, the block compressed, and its size inflated.
    struct Block: Sendable {
        var flags: [UInt8]
        var compressed: [UInt8]
        var plainSize: UInt32
    }

    /// Takes the names in order of their numbers and makes each block once it is full (the last one at
    /// ``finish()``). A full block waits in a list and a task on one of the maker's lanes takes one waiting block;
    /// at ``finish()`` the caller makes the blocks still waiting itself and then waits only for those being made,
    /// so the cache is made even when no other thread is free (the collector makes caches on its request threads).
    ///
    /// The lanes are serial queues, one per core beyond two (at least one): the writer's looking-up thread and its
    /// row maker keep theirs. On 2 cores one lane made swift-format's cache in 0.95× the wall time of libdispatch's
    /// global queue (the median of 25 pairs taking turns), which ran 3 threads of blocks beside the other two.
    struct Maker {
        /// How many names were added.
        private(set) var count = 0
        /// How the blocks are compressed (the cache's format version says which).
        let compression: SymbolCacheFormat.NameCompression
        private var pending: [Name] = []
        private var submitted = 0
        private let work: NameWork
        private let lanes: [DispatchQueue]

        /// A maker compressing with `compression` (by default zstd when libzstd can be loaded, else zlib).
        init(compression: SymbolCacheFormat.NameCompression = SymbolCacheNames.availableCompression) {
            self.compression = compression
            work = NameWork(compression: compression)
            lanes = (0..<max(1, Processors.online - 2)).map {
                DispatchQueue(label: "cohorly.symbols.cache-names.\($0)")
            }
        }

        /// Adds the next name (copying its bytes: the symbolicator's text may change once the writer goes on):
        /// `readable`, or when nil `raw` demangled.
        mutating func add(readable: UnsafeBufferPointer<UInt8>?, raw: UnsafeBufferPointer<UInt8>) {
            var rawWithNUL = [UInt8]()
            rawWithNUL.reserveCapacity(raw.count + 1)
            rawWithNUL += raw
            rawWithNUL.append(0)
            pending.append(Name(readable: readable.map { Array($0) }, rawWithNUL: rawWithNUL))
            count += 1
            if pending.count == SymbolCacheFormat.namesPerBlock { submit() }
        }

        private mutating func submit() {
            work.append((count - 1) / SymbolCacheFormat.namesPerBlock, pending)
            submitted += 1
            pending = []
            pending.reserveCapacity(SymbolCacheFormat.namesPerBlock)
            let work = self.work
            lanes[submitted % lanes.count].async { work.makeOne() }
        }

        /// Hands the names of the last block, not full yet, to a lane (no name may be added after).
        mutating func submitPending() {
            if !pending.isEmpty { submit() }
        }

        /// Every name's flags, the block table and the blocks' data, once every block is made.
        mutating func finish() -> (flags: [UInt8], blockTable: [UInt8], data: [UInt8]) {
            submitPending()
            while work.makeOne() {}
            for _ in 0..<submitted { work.made.wait() }
            return work.assemble()
        }
    }

    /// The blocks waiting to be made and those made, by number; `made` is signalled once per block made.
    private final class NameWork: Sendable {
        /// The blocks handed over, in order (a block's names are dropped when it is taken), the first not taken,
        /// and the blocks made.
        private let state = Mutex<(waiting: [(index: Int, names: [Name])], next: Int, blocks: [Block?])>(([], 0, []))
        let made = DispatchSemaphore(value: 0)
        let compression: SymbolCacheFormat.NameCompression

        init(compression: SymbolCacheFormat.NameCompression) { self.compression = compression }

        func append(_ index: Int, _ names: [Name]) {
            state.withLock { $0.waiting.append((index, names)) }
        }

        /// Makes one waiting block (the first); false when none was waiting.
        @discardableResult func makeOne() -> Bool {
            let job: (index: Int, names: [Name])? = state.withLock { state in
                guard state.next < state.waiting.count else { return nil }
                let job = state.waiting[state.next]
                state.waiting[state.next].names = []
                state.next += 1
                return job
            }
            guard let job else { return false }
            let block = SymbolCacheNames.block(job.names, compression: compression)
            state.withLock { state in
                if state.blocks.count <= job.index {
                    state.blocks += repeatElement(nil, count: job.index + 1 - state.blocks.count)
                }
                state.blocks[job.index] = block
            }
            made.signal()
            return true
        }

        func assemble() -> (flags: [UInt8], blockTable: [UInt8], data: [UInt8]) {
            state.withLock { state in
                var flags: [UInt8] = []
                var table: [UInt8] = []
                var data: [UInt8] = []
                flags.reserveCapacity(state.blocks.count * SymbolCacheFormat.namesPerBlock)
                table.reserveCapacity(state.blocks.count * SymbolCacheFormat.nameBlockEntrySize)
                data.reserveCapacity(state.blocks.reduce(0) { $0 + ($1?.compressed.count ?? 0) })
                for block in state.blocks {
                    guard let block else { continue }  // every block is made before `finish` assembles them
                    flags += block.flags
                    table.appendLittleEndian(UInt64(data.count))
                    table.appendLittleEndian(UInt32(truncatingIfNeeded: block.compressed.count))
                    table.appendLittleEndian(block.plainSize)
                    data += block.compressed
                }
                return (flags, table, data)
            }
        }
    }

    /// zstd when libzstd can be loaded here, else zlib.
    static var availableCompression: SymbolCacheFormat.NameCompression {
        cly_zstd_load_error() == nil ? .zstd : .zlib
    }

    /// zlib's fastest level (format version 1): on swift-format's 26 MB of names it compresses in two thirds of
    /// level 6's time, to 4.2 MB against 3.6 MB.
    static let zlibLevel: Int32 = 1
    /// zstd's level (format version 2), measured on swift-format's 5,200 blocks (26 MB) with a context per
    /// thread: level 3 compresses them in 0.08 s to 4.20 MB (zlib level 1: 0.20 s, 4.21 MB), level 1 in 0.077 s
    /// to 4.37 MB, level 4 in 0.13 s to 3.86 MB; each decompresses in 0.03 s (zlib: 0.08 s).
    static let zstdLevel: Int32 = 3

    /// The block of `names`: each one's flags, and `full\0raw\0` of each, compressed.
    static func block(_ names: [Name], compression: SymbolCacheFormat.NameCompression) -> Block {
        var flags: [UInt8] = []
        flags.reserveCapacity(names.count)
        var plain: [UInt8] = []
        plain.reserveCapacity(names.reduce(0) { $0 + 3 * $1.rawWithNUL.count + ($1.readable?.count ?? 0) + 1 })
        var scratch = [CChar](repeating: 0, count: 4096)
        for name in names {
            let start = plain.count
            if let readable = name.readable {
                plain += readable
            } else {
                appendReadable(of: name.rawWithNUL, to: &plain, scratch: &scratch)
            }
            let kind = plain.withUnsafeBufferPointer { bytes in
                let readable = UnsafeBufferPointer(rebasing: bytes[start...])
                var kind: SymbolCacheFormat.NameFlags = []
                if isCompilerMade(readable) { kind.insert(.compilerMade) }
                if readable.starts(with: runtimeFailurePrefix) { kind.insert(.runtimeFailure) }
                return kind
            }
            flags.append(kind.rawValue)
            plain.append(0)
            plain += name.rawWithNUL
        }
        let compressed: [UInt8]
        switch compression {
        case .zlib: compressed = zlibCompressed(plain)
        case .zstd: compressed = zstdCompressed(plain)
        }
        return Block(flags: flags, compressed: compressed, plainSize: UInt32(truncatingIfNeeded: plain.count))
    }

    /// `plain` as one zlib stream; empty only when zlib has no memory (the reader then has no names for the
    /// block's numbers).
    static func zlibCompressed(_ plain: [UInt8]) -> [UInt8] {
        let bound = Int(compressBound(uLong(plain.count)))
        var status = Z_OK
        let compressed = [UInt8](unsafeUninitializedCapacity: bound) { out, written in
            var length = uLong(bound)
            status = plain.withUnsafeBufferPointer {
                compress2(out.baseAddress, &length, $0.baseAddress, uLong($0.count), zlibLevel)
            }
            // compress2 fails only without memory: keep the block stored as is (zlib level 0 is still zlib).
            if status != Z_OK {
                length = uLong(bound)
                status = plain.withUnsafeBufferPointer {
                    compress2(out.baseAddress, &length, $0.baseAddress, uLong($0.count), 0)
                }
            }
            written = status == Z_OK ? Int(length) : 0
        }
        return status == Z_OK ? compressed : []
    }

    /// `plain` as one zstd frame (its content size in the frame header), with this thread's zstd context; empty
    /// only when zstd has no memory (as ``zlibCompressed(_:)``).
    static func zstdCompressed(_ plain: [UInt8]) -> [UInt8] {
        let bound = cly_zstd_compress_bound(plain.count)
        return [UInt8](unsafeUninitializedCapacity: bound) { out, written in
            var error: UnsafePointer<CChar>?
            written = plain.withUnsafeBufferPointer {
                cly_zstd_compress_reusing(out.baseAddress, bound, $0.baseAddress, $0.count, zstdLevel, &error)
            }
        }
    }

    /// Appends the readable form of the NUL-terminated linkage name `raw` (as ``Demangler/readableCopy(_:)``
    /// makes it) to `plain`, or the name itself when it is not mangled or cannot be demangled. A Swift name is
    /// demangled into `scratch` (grown when too small), so no name allocates a copy of its own.
    static func appendReadable(of raw: [UInt8], to plain: inout [UInt8], scratch: inout [CChar]) {
        let length = max(raw.count - 1, 0)
        let appended = raw.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { name -> Bool in
                guard let mangled = name.baseAddress, raw.last == 0 else { return false }
                guard Demangler.hasSwiftPrefix(mangled, length) else {
                    guard let made = Demangler.readableCopy(mangled) else { return false }
                    defer { free(made) }
                    plain += UnsafeRawBufferPointer(start: made, count: strlen(made))
                    return true
                }
                for _ in 0..<2 {
                    var capacity = scratch.count
                    let made = scratch.withUnsafeMutableBufferPointer {
                        swift_demangle(mangled, length, $0.baseAddress, &capacity, 0) != nil
                    }
                    guard made else { return false }
                    if capacity > scratch.count {  // cut short: `capacity` is the size needed
                        scratch = [CChar](repeating: 0, count: capacity)
                        continue
                    }
                    scratch.withUnsafeBufferPointer {
                        guard let start = $0.baseAddress else { return }
                        plain += UnsafeRawBufferPointer(start: start, count: strlen(start))
                    }
                    return true
                }
                return false
            }
        }
        if !appended { plain += raw.prefix(length) }
    }

    /// The start of a Swift runtime trap's artificial frame's name.
    private static let runtimeFailurePrefix = Array("Swift runtime failure: ".utf8)

    /// ``AppCode/isCompilerMade(_:)`` of the name whose UTF-8 bytes are `bytes`. An ASCII name without a carriage
    /// return (bytes and characters one to one) goes through the same parse on its bytes
    /// (``strippingPieceAndSpecialization(_:)``); any other is parsed as a string by ``AppCode`` (which walks it
    /// by characters: it was a tenth of the writer's work on swift-format, where a quarter of the names pass the
    /// pre-check and most of those start with `specialized `).
    static func isCompilerMade(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isCompilerMade($0) }
    }

    /// ``isCompilerMade(_:)-([UInt8])`` of the bytes of a name in place.
    static func isCompilerMade(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard mayBeCompilerMade(name) else { return false }
        guard name.allSatisfy({ $0 < 0x80 && $0 != 0x0d }) else {
            return AppCode.isCompilerMade(String(decoding: name, as: UTF8.self))
        }
        let core = strippingPieceAndSpecialization(name)
        return compilerMadePrefixes.contains { core.starts(with: $0) }
    }

    /// ``AppCode/strippingPieceAndSpecialization(_:)`` on the bytes of an ASCII name: the same steps, each
    /// character a byte.
    static func strippingPieceAndSpecialization(_ name: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>>
    {
        var rest = name[...]
        while true {
            if rest.first == 0x28, let close = rest.firstIndex(of: 0x29),  // "(", ")"
                rest[(rest.startIndex + 1)..<close].allSatisfy({ (0x30...0x39).contains($0) })
            {
                let after = rest[(close + 1)...]
                guard let piece = pieceWords.first(where: { after.starts(with: $0) }) else { return rest }
                rest = after.dropFirst(piece.count)
            } else if rest.starts(with: specialized) {
                rest = rest.dropFirst(specialized.count)
            } else if let open = rest.firstIndex(of: 0x3c),  // "<"
                rest[..<open].reversed().starts(with: specialization.reversed()),
                memmemBytes(rest[..<open], of: spacedOf) == nil
            {
                // Up to the matching `>` (a `->` inside is a function type, not a bracket), then ` of `.
                var depth = 0
                var previous: UInt8 = 0x20
                var end: Int?
                for index in open..<rest.endIndex {
                    let byte = rest[index]
                    if byte == 0x3c { depth += 1 }
                    if byte == 0x3e && previous != 0x2d {  // ">", "-"
                        depth -= 1
                        if depth == 0 {
                            end = index
                            break
                        }
                    }
                    previous = byte
                }
                guard let end, rest[(end + 1)...].starts(with: spacedOf) else { return rest }
                rest = rest[(end + 1)...].dropFirst(spacedOf.count)
            } else {
                return rest
            }
        }
    }

    /// Where `word` first occurs in `bytes` (its offset from their start), or nil.
    private static func memmemBytes(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, of word: [UInt8]) -> Int? {
        guard let base = bytes.base.baseAddress else { return nil }
        return memmemBytes(base + bytes.startIndex, bytes.count, of: word)
    }

    private static let pieceWords = [" suspend resume partial function for ", " await resume partial function for "]
        .map { Array($0.utf8) }

    /// Where `word` first occurs in the `count` bytes at `base`, or nil.
    private static func memmemBytes(_ base: UnsafePointer<UInt8>, _ count: Int, of word: [UInt8]) -> Int? {
        guard let first = word.first, count >= word.count else { return nil }
        var at = 0
        while at + word.count <= count, let found = memchr(base + at, Int32(first), count - word.count + 1 - at) {
            at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if memcmp(base + at, word, word.count) == 0 { return at }
            at += 1
        }
        return nil
    }

    private static let specialized = Array("specialized ".utf8)
    private static let specialization = Array("specialization ".utf8)
    private static let spacedOf = Array(" of ".utf8)

    /// Whether a readable name may be compiler-made: one of ``AppCode``'s compiler-made prefixes occurs where
    /// ``AppCode/isCompilerMade(_:)`` may find it, at the start or right after the words it strips (an async
    /// piece's `… for `, `specialized `, a specialization's `> of `). A necessary condition, so
    /// ``AppCode/isCompilerMade(_:)`` (a parse of the string, much slower than these byte searches) is asked
    /// only then; it holds for about a quarter of swift-format's names.
    static func mayBeCompilerMade(_ name: [UInt8]) -> Bool {
        name.withUnsafeBufferPointer { mayBeCompilerMade($0) }
    }

    /// ``mayBeCompilerMade(_:)-([UInt8])`` of the bytes of a name in place.
    static func mayBeCompilerMade(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        func hasPrefix(at start: Int) -> Bool {
            compilerMadePrefixes.contains {
                start + $0.count <= bytes.count && memcmp(base + start, $0, $0.count) == 0
            }
        }
        if hasPrefix(at: 0) { return true }
        // The words end with a space: only after a space can a prefix count (one scan, not one per prefix).
        var at = 0
        while at < bytes.count, let found = memchr(base + at, 0x20, bytes.count - at) {
            let end = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
            if coreStarts.contains(where: { end >= $0.count && memcmp(base + end - $0.count, $0, $0.count) == 0 })
                && hasPrefix(at: end)
            {
                return true
            }
            at = end
        }
        return false
    }

    /// ``AppCode``'s compiler-made prefixes, as bytes.
    private static let compilerMadePrefixes = AppCode.compilerMadePrefixes.map { Array($0.utf8) }
    /// The endings of the words ``AppCode/isCompilerMade(_:)`` strips, after which a compiler-made prefix counts.
    private static let coreStarts: [[UInt8]] = ["for ", "specialized ", " of "].map { Array($0.utf8) }
}
