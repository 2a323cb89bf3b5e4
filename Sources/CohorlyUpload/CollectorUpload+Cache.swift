import CohorlyCollectorAPI
import CohorlySymbols
import Foundation

/// `cohorly debug-files upload --include-cache`: the symbol cache of each build with DWARF is made here and sent as
/// kind `symcache` beside its files (the collector otherwise makes it itself when the debug file arrives).
extension CollectorUpload {
    /// A private temporary directory for the caches of one run, removed by ``removeCaches(_:)``.
    static func makeCacheDirectory() throws(UploadFailure) -> String {
        var template = Array((NSTemporaryDirectory() + "cohorly-caches-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw UploadFailure(description: "cannot make a temporary directory: \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// Writes the symbol cache of the file at `path` (build id `buildId`) into `directory`, named after the file
    /// (`NAME.symcache`, the name the collector records); returns its path.
    static func writeCache(of path: String, buildId: String, into directory: String) throws(UploadFailure) -> String {
        let bytes: [UInt8]
        do {
            bytes = try SymbolCacheWriter.make(
                codeFile: path, locator: DebugFileLocator(searchPaths: [], debugRoots: [], debuginfod: nil))
        } catch {
            throw UploadFailure(
                description: "symbol cache not made: \(error); the collector makes it when the debug file arrives")
        }
        let folder = directory + "/" + buildId
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let cache = folder + "/" + URL(fileURLWithPath: path).lastPathComponent + ".symcache"
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: cache))
        } catch {
            throw UploadFailure(description: "symbol cache not written: \(error)")
        }
        return cache
    }

    /// Removes a run's cache directory.
    static func removeCaches(_ directory: String) {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
