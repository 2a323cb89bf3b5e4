// Shared by the fuzz targets that need their input as a file (libelf/libdw open paths): one scratch file per
// target and process, in /dev/shm when it is writable.
#if canImport(Glibc)
    import Glibc
#endif

/// The path of this target's scratch file.
func makeScratchPath(target: String) -> String {
    let directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(directory)/cohorly-fuzz-\(target)-\(getpid()).elf"
}

/// Replaces the scratch file's contents with the fuzzer's input.
func writeScratch(_ path: String, _ data: UnsafePointer<UInt8>, _ size: Int) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    precondition(fd >= 0, "cannot create \(path)")
    var written = 0
    while written < size {
        let n = write(fd, data + written, size - written)
        precondition(n > 0, "cannot write \(path)")
        written += n
    }
    close(fd)
}
