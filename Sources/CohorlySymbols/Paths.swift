#if canImport(Glibc)
    import Glibc
#endif

/// Small file-system helpers (POSIX only; no Foundation).
enum Paths {
    static func join(_ directory: String, _ name: String) -> String {
        if name.hasPrefix("/") {
            return directory.hasSuffix("/") ? directory + name.dropFirst() : directory + name
        }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// `root` + absolute `directory` + `name` (the `/usr/lib/debug/<dir>/<name>` debuglink rule).
    static func join(root: String, _ directory: String, _ name: String) -> String {
        join(root + (directory.hasPrefix("/") ? directory : "/" + directory), name)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// The names in a directory but `.` and `..`, sorted (empty when it cannot be read).
    static func names(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Calls `body` for every regular file at or under `path`, following symlinks, each directory once
    /// (by device and inode, so symlink loops end).
    static func walk(_ path: String, visited: inout Set<String>, _ body: (String) -> Void) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            body(path)
        case S_IFDIR:
            guard visited.insert("\(info.st_dev):\(info.st_ino)").inserted else { return }
            for name in names(in: path) { walk(join(path, name), visited: &visited, body) }
        default:
            return
        }
    }
}
