// Fuzz target `objectinfo`: the ELF identity reader (`ObjectInfo(path:)`: build id, debug link, sections,
// compression, split DWARF) on the bytes written to a temporary file.
#if canImport(Glibc)
    import Glibc
#endif

@testable import CohorlySymbols

let scratchPath: String = {
    let directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(directory)/cohorly-fuzz-objectinfo-\(getpid()).elf"
}()

func writeScratch(_ data: UnsafePointer<UInt8>, _ size: Int) {
    let fd = open(scratchPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    precondition(fd >= 0, "cannot create \(scratchPath)")
    var written = 0
    while written < size {
        let n = write(fd, data + written, size - written)
        precondition(n > 0, "cannot write \(scratchPath)")
        written += n
    }
    close(fd)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzObjectInfo(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    writeScratch(data, size)
    if let info = try? ObjectInfo(path: scratchPath) {
        _ = (info.codeId, info.debugId, info.features, info.problems, info.kind, info.arch)
    }
    return 0
}
