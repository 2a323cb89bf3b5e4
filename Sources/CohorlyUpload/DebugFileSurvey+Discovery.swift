import CohorlySymbols
import Foundation

extension DebugFileSurvey {
    /// The reason of a named file that is not ELF.
    package static let notELFReason = "not an ELF file"

    /// ELF files under `paths`, in a stable order, each file once (symlinks to files followed, compared by the file
    /// they resolve to). A named directory is walked recursively, also when it is itself a symlink (SwiftPM's
    /// `.build/release`); symlinked directories inside it are not followed, and a directory reached twice (a bind
    /// mount of its parent) is walked once. Non-ELF files found in directories are ignored; named ones are reported
    /// as skipped. A file or directory that cannot be read is a failure naming it: a debug file that cannot be read
    /// is a debug file that does not get uploaded.
    package static func discover(_ paths: [String]) -> (files: [(path: String, root: Int)], skipped: [DebugFileResult])
    {
        var seen: Set<String> = []
        var files: [(path: String, root: Int)] = []
        var skipped: [DebugFileResult] = []
        func consider(_ path: String, root: Int, named: Bool) {
            let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            var info = stat()
            guard stat(resolved, &info) == 0 else {
                if named {
                    skipped.append(DebugFileResult(path: path, status: .failed, reason: "no such file", root: root))
                }
                return
            }
            guard info.st_mode & S_IFMT == S_IFREG else {  // a FIFO, socket or device: never opened
                if named {
                    skipped.append(
                        DebugFileResult(path: path, status: .failed, reason: "not a regular file", root: root))
                }
                return
            }
            switch elfMagic(resolved) {
            case .elf: if seen.insert(resolved).inserted { files.append((path, root)) }
            case .notELF:
                if named {
                    skipped.append(DebugFileResult(path: path, status: .skipped, reason: notELFReason, root: root))
                }
            case .unreadable(let reason):
                skipped.append(
                    DebugFileResult(path: path, status: .failed, reason: "cannot read: \(reason)", root: root))
            }
        }
        for (root, path) in paths.enumerated() {
            var info = stat()
            guard stat(path, &info) == 0 else {  // follows a symlink: a symlinked directory is a directory
                skipped.append(
                    DebugFileResult(path: path, status: .failed, reason: "no such file or directory", root: root))
                continue
            }
            guard info.st_mode & S_IFMT == S_IFDIR else {
                consider(path, root: root, named: true)
                continue
            }
            var walk = DirectoryWalk()
            walk.walk(path)
            for failure in walk.unreadable {
                skipped.append(
                    DebugFileResult(
                        path: failure.path, status: .failed, reason: "cannot read: \(failure.reason)", root: root))
            }
            for entry in walk.files.sorted() { consider(path + "/" + entry, root: root, named: false) }
        }
        return (files, skipped)
    }

    /// What the first bytes of a file say.
    enum Magic {
        case elf, notELF
        case unreadable(String)
    }

    /// Whether `path` starts with the ELF magic, or why it cannot be read.
    static func elfMagic(_ path: String) -> Magic {
        let file: RegularFile
        do {
            file = try RegularFile(path: path)
        } catch {
            if case .cannotOpen(_, let reason) = error { return .unreadable(reason) }
            return .notELF
        }
        var magic = [UInt8](repeating: 0, count: 4)
        let count = pread(file.descriptor, &magic, 4, 0)
        if count < 0 { return .unreadable(String(cString: strerror(errno))) }
        return count == 4 && magic == [0x7f, 0x45, 0x4c, 0x46] ? .elf : .notELF
    }
}

/// A recursive listing of a directory: the relative paths of everything that is not a directory (symlinks
/// included, not followed into when they name a directory), each real directory listed once (by device and
/// inode), and the directories that could not be read.
struct DirectoryWalk {
    /// The relative paths of everything that is not a directory, in walk order.
    private(set) var files: [String] = []
    /// The directories that could not be read, and why.
    private(set) var unreadable: [(path: String, reason: String)] = []
    private var visited: Set<[UInt64]> = []

    /// Lists everything under `root`.
    mutating func walk(_ root: String) { visit(root, relative: "") }

    private mutating func visit(_ directory: String, relative: String) {
        var info = stat()
        guard stat(directory, &info) == 0, visited.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted else {
            return
        }
        guard let stream = opendir(directory) else {
            unreadable.append((directory, String(cString: strerror(errno))))
            return
        }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(stream)
        for name in names.sorted() {
            let path = directory + "/" + name
            let child = relative.isEmpty ? name : relative + "/" + name
            var entry = stat()
            guard lstat(path, &entry) == 0 else { continue }
            if entry.st_mode & S_IFMT == S_IFDIR {
                visit(path, relative: child)
            } else {
                files.append(child)
            }
        }
    }
}
