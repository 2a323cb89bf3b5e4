// Fuzz target `symcache`: a fuzzed symbol cache file (`cohorly debug-files cache`) opened by its reader
// (`SymbolCacheReader`: header and table bounds checked) and looked up — at the first blocks' starts and just
// inside them, at 0 and at an address taken from the input's last 8 bytes — with every frame's name and path
// read back, then the first names' strings and flags. A corrupt cache must be refused or answer nothing, never
// fault, hang or read outside the file.
#if canImport(Glibc)
    import Glibc
#endif

@testable import CohorlySymbols

let scratchPath = makeScratchPath(target: "symcache")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSymbolCache(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    writeScratch(scratchPath, data, size)
    guard let reader = try? SymbolCacheReader(path: scratchPath) else { return 0 }
    var tail: UInt64 = 0
    if size >= 8 { for index in (size - 8..<size).reversed() { tail = tail << 8 | UInt64(data[index]) } }
    var addresses: [UInt64] = [0, tail, UInt64.max]
    for start in reader.blockStartAddresses(limit: 8) { addresses += [start, start &+ 1, start &+ 17] }
    let text = TextTable()
    var frames: [FrameRecord] = []
    for address in addresses {
        frames.removeAll(keepingCapacity: true)
        reader.lookup(address, into: &frames, text: text)
        for frame in frames {
            _ = (text.string(frame.function), text.string(frame.rawFunction), text.string(frame.file))
        }
    }
    for index in 0..<16 {
        if let strings = reader.strings(of: index) {
            _ = (strlen(strings.readable), strlen(strings.raw))
        }
        _ = reader.flags(of: index)
    }
    return 0
}
