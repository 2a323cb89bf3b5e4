#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// A default state directory that cannot be made is not fatal: a read-only home (systemd `ProtectHome=read-only`,
/// Kubernetes `readOnlyRootFilesystem`) must not stop the app, nor its crash reporting.
extension StateDirectory {
    /// Makes the default directory `subdirectory` of the state tree (``cohorly(_:environment:)``), private (0700,
    /// this user's, not group- or world-writable), and returns its path. When it cannot be made or is unsafe, the
    /// same subdirectory under the first fallback root that can be made private is used instead, and one line on
    /// standard error says so once per process (where the files go, and how to choose another directory).
    /// Fallback roots, in order: `$XDG_RUNTIME_DIR/cohorly` (the user's private runtime directory, when it is an
    /// absolute path to a directory of this user that others cannot write to), then `cohorly-<uid>` in the system
    /// temporary directory (`$TMPDIR` when absolute, else `/tmp`): created 0700, and refused when it is a symbolic
    /// link, is not a directory, belongs to someone else or is open to others (in a shared `/tmp` another user may
    /// have made it first, to read or plant what is written there). Both are emptied at reboot.
    /// - Throws: the failure of the default directory when no fallback can be made either.
    package static func makeDefault(_ subdirectory: String, environment: [String: String]? = nil)
        throws(PrivateFiles.Failure) -> String
    {
        let preferred = cohorly(subdirectory, environment: environment)
        let failure: PrivateFiles.Failure
        do {
            try PrivateFiles.makeDirectory(preferred, requireOwnerOnly: true)
            return preferred
        } catch {
            failure = error
        }
        for root in fallbackRoots(environment: environment) {
            let path = root + "/" + subdirectory
            guard (try? PrivateFiles.makeDirectory(path, requireOwnerOnly: true)) != nil else { continue }
            announce(failure, fallback: root)
            return path
        }
        throw failure
    }

    /// The fallback roots that can be used now (see ``makeDefault(_:environment:)``), in order.
    package static func fallbackRoots(environment: [String: String]? = nil) -> [String] {
        let lookup = { (name: String) -> String? in
            environment.map { $0[name] } ?? getenv(name).map { String(cString: $0) }
        }
        var roots: [String] = []
        if let runtime = lookup("XDG_RUNTIME_DIR"), runtime.hasPrefix("/"), isPrivateDirectory(runtime) {
            let root = runtime + "/cohorly"
            if (try? PrivateFiles.makeDirectory(root, requireOwnerOnly: true)) != nil { roots.append(root) }
        }
        let temporary = lookup("TMPDIR").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        if let root = privateTemporaryRoot(in: temporary) { roots.append(root) }
        return roots
    }

    /// `<temporary>/cohorly-<uid>`, made 0700 when missing; nil when it cannot be made, or what is there is not a
    /// directory (a symbolic link is not followed), belongs to another user or is open to group or others.
    static func privateTemporaryRoot(in temporary: String) -> String? {
        var base = temporary
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        let root = base + "/cohorly-\(geteuid())"
        if mkdir(root, 0o700) == 0 { chmod(root, 0o700) }
        var info = stat()
        guard lstat(root, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid(),
            info.st_mode & 0o077 == 0
        else { return nil }
        return root
    }

    /// Whether `path` is a directory of this user that group and others cannot write to.
    private static func isPrivateDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            && PrivateFiles.ownerOnlyProblem(info) == nil
    }

    private static let announced = Atomic<Bool>(false)

    /// Says once per process that the default state directory could not be used and where files go instead.
    private static func announce(_ failure: PrivateFiles.Failure, fallback root: String) {
        guard !announced.exchange(true, ordering: .relaxed) else { return }
        let line =
            "[Cohorly] the state directory cannot be used (\(failure)): crash reports and the event queue are kept"
            + " in \(root) instead (emptied at reboot); choose another directory with XDG_STATE_HOME, or"
            + " CohorlyCrash.Options(reportDirectory:) and Cohorly.initialize(storageDirectory:)\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}
