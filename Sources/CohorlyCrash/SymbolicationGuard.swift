import CCrashRecorder
import Foundation

/// Makes sure a report whose symbolication ended the process (a bug on a malformed file, say) goes out raw
/// next time instead of ending every launch: a marker `<report>.symbolicating` (mode 0600, holding the pid of the
/// process symbolicating) exists while it runs.
///
/// Only a process that died *inside* symbolication leaves its marker: when the launch ends otherwise while
/// symbolication runs on another thread — a normal `exit()` (a CLI tool, a health check, a crash loop that
/// exits quickly) or a termination signal with its default action — the recorder removes the marker
/// (cly_symbolication_marker.c), and the work is done again by the detached sender, or by the next launch.
enum SymbolicationGuard {
    /// Runs `symbolicate` for the report at `report` unless a marker says an earlier run never returned;
    /// returns nil then. The marker is removed when `symbolicate` returns (see ``finished(_:)`` for the other).
    static func once<T>(_ report: URL, _ symbolicate: () -> T) -> T? {
        let marker = markerFile(report)
        // Removed by the exit hook if this launch exits before `symbolicate` returns, set before the file exists
        // (one marker at a time: a second one at once is only removed here).
        let removedAtExit = cly_symbolication_marker_set(marker.path) == 0
        let fd = open(marker.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {  // there already: an earlier run died inside symbolication
            if removedAtExit { cly_symbolication_marker_forget() }
            return nil
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if removedAtExit { _ = cly_symbolication_marker_made() }  // false: exiting already; the work goes on as it may
        defer {
            if removedAtExit { cly_symbolication_marker_forget() }
            unlink(marker.path)
        }
        return symbolicate()
    }

    /// Removes the marker of a report that is done with (its event is queued or the report was dropped).
    static func finished(_ report: URL) {
        unlink(markerFile(report).path)
    }

    static func markerFile(_ report: URL) -> URL { URL(fileURLWithPath: report.path + ".symbolicating") }
}
