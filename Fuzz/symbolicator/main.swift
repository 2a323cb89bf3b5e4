// Fuzz target `symbolicator`: a fuzzed ELF file opened as a module (`ModuleSymbolicator(debugFile:)`: header,
// DWARF index, symbol table) and a few addresses looked up — around the entry point, the load address and
// one address taken from the input's last 8 bytes — one by one, then again as a batch (the path of
// `symbolicate --exe`: sorted, grouped, names demangled together), which must give the same frames.
#if canImport(Glibc)
    import Glibc
#endif

@testable import CohorlySymbols

let scratchPath = makeScratchPath(target: "symbolicator")

/// Little-endian integer of `count` bytes at `offset` (0 when out of range).
func integer(_ data: UnsafePointer<UInt8>, _ size: Int, _ offset: Int, _ count: Int) -> UInt64 {
    guard offset >= 0, offset + count <= size else { return 0 }
    var value: UInt64 = 0
    for index in (0..<count).reversed() { value = value << 8 | UInt64(data[offset + index]) }
    return value
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSymbolicator(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    writeScratch(scratchPath, data, size)
    guard let module = try? ModuleSymbolicator(debugFile: scratchPath) else { return 0 }
    let is64 = size > 4 && data[4] == 2
    let entry = is64 ? integer(data, size, 24, 8) : integer(data, size, 24, 4)
    var addresses: [UInt64] = [module.loadAddress, integer(data, size, size - 8, 8)]
    for step in 0..<6 { addresses.append(entry &+ UInt64(step * 8)) }
    var alone: [[SymbolicatedFrame]] = []
    for address in addresses {
        for isReturn in [false, true] {
            let result = module.symbolicate(address, isReturnAddress: isReturn)
            _ = "\(result)"
            if !isReturn { alone.append(result.frames) }
        }
    }
    let batch = module.records(for: addresses)
    for (index, frames) in alone.enumerated() {
        let batched = batch.records[batch.frames(of: index)].map(module.frame)
        if batched != frames { fatalError("batch and single lookups differ at \(addresses[index])") }
    }
    return 0
}
