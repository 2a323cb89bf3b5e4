// Fuzz target `objectinfo`: the ELF identity reader (`ObjectInfo(path:)`: build id, debug link, sections,
// compression, split DWARF) on the bytes written to a temporary file.
#if canImport(Glibc)
    import Glibc
#endif

@testable import CohorlySymbols

let scratchPath = makeScratchPath(target: "objectinfo")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzObjectInfo(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    writeScratch(scratchPath, data, size)
    if let info = try? ObjectInfo(path: scratchPath) {
        _ = (info.codeId, info.debugId, info.features, info.problems, info.kind, info.arch)
    }
    return 0
}
