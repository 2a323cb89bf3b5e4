import Foundation

/// Makes sure a report whose symbolication ended the process (a bug on a malformed file, say) goes out raw
/// next time instead of ending every launch: a marker `<report>.symbolicating` exists while it runs.
enum SymbolicationGuard {
    /// Runs `symbolicate` for the report at `report` unless a marker says an earlier run never returned;
    /// returns nil then. The marker is removed when `symbolicate` returns (see ``finished(_:)`` for the other).
    static func once<T>(_ report: URL, _ symbolicate: () -> T) -> T? {
        let marker = markerFile(report)
        if FileManager.default.fileExists(atPath: marker.path) { return nil }
        guard FileManager.default.createFile(atPath: marker.path, contents: nil) else { return nil }
        defer { try? FileManager.default.removeItem(at: marker) }
        return symbolicate()
    }

    /// Removes the marker of a report that is done with (its event is queued or the report was dropped).
    static func finished(_ report: URL) {
        try? FileManager.default.removeItem(at: markerFile(report))
    }

    static func markerFile(_ report: URL) -> URL { URL(fileURLWithPath: report.path + ".symbolicating") }
}
