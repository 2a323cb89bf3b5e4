import Cohorly
import CohorlyFiles
import Foundation
import Synchronization
import CohorlyLaunch

#if canImport(Glibc)
    import Glibc
#endif

/// The "died while hung" file: while a hang lasts, `hang-<insert id>.json` in the report directory holds it as
/// a report (format ``CrashReportFormat/current``) of mechanism `hang` (the hung thread as the crashed one, the other threads, the
/// modules, the launch's context). The insert id is the launch's (`CrashRecorder.pendingInsertId`, the one
/// its crash report would carry), so one launch has at most one such file and one death makes one event.
///
/// Written atomically (a private `.hang-….tmp`, mode 0600, renamed into place) and held with an `flock` for as
/// long as the hang lasts, so a later launch tells a live process's file (locked) from a dead one's (free).
/// Its modification time is refreshed while the hang goes on: a later launch takes the blocked duration up to
/// that moment. Removed when the hang ends.
final class HangReportFile: @unchecked Sendable {  // immutable but for `removed`; its folder is only read
    static let prefix = "hang-"
    static let suffix = ".json"

    let name: String
    private let folder: ReportDirectory
    private let descriptor: Int32
    private let removed = Atomic<Bool>(false)

    /// `hang-<insertId>.json`.
    static func name(forLaunch insertId: String) -> String { prefix + insertId + suffix }

    /// Writes `report` as the launch's hang file and locks it. Nil when it cannot be written.
    init?(directory: URL, report: CrashReport) {
        let insertId = report.insertId
        let bytes = report.fileBytes
        guard let folder = ReportDirectory(path: directory.path) else { return nil }
        let name = Self.name(forLaunch: insertId)
        let staging = "." + Self.prefix + insertId + ".tmp"
        folder.remove(staging)
        guard !bytes.isEmpty, folder.write(staging, bytes, exclusive: true) else { return nil }
        let fd = openat(folder.descriptor, staging, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            folder.remove(staging)
            return nil
        }
        // Locked before it gets its name: a later launch never sees it unlocked while this process lives.
        guard HeldFile.claim(fd), folder.move(staging, to: folder, as: name) else {
            close(fd)
            folder.remove(staging)
            return nil
        }
        self.name = name
        self.folder = folder
        descriptor = fd
    }

    /// Records that the process is still alive and hung (the file's modification time).
    func touch() {
        if !removed.load(ordering: .sequentiallyConsistent) { futimens(descriptor, nil) }
    }

    /// The hang ended: removes the file, then lets go of the lock.
    func remove() {
        guard !removed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        folder.remove(name)
        close(descriptor)
    }

    // MARK: - The next launch

    /// The hang files left by launches that died hung, with their reports; the blocked duration extended to
    /// the file's last refresh. Files of processes still alive (locked) are left alone; unreadable ones are
    /// removed.
    static func leftovers(in directory: URL) -> [(file: CrashReportStore.ReportFile, report: CrashReport)] {
        guard let folder = ReportDirectory(path: directory.path) else { return [] }
        var found: [(file: CrashReportStore.ReportFile, report: CrashReport)] = []
        for name in folder.names() where name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            guard let info = folder.ownedRegularFile(name) else { continue }
            let fd = openat(folder.descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            // Locked: its process is alive (still hung). Gone or replaced while we locked it: it ended.
            guard HeldFile.isFree(fd), let now = folder.ownedRegularFile(name),
                now.st_ino == info.st_ino
            else { continue }
            guard case .success(let bytes) = folder.read(name, limit: CrashReportStore.maximumReportBytes),
                var report = try? CrashReport.decode(Data(bytes)), report.mechanism == .hang,
                var hang = report.hang
            else {
                folder.remove(name)
                continue
            }
            let lastSeenMs = UInt64(max(0, now.st_mtim.tv_sec)) * 1000 + UInt64(max(0, now.st_mtim.tv_nsec)) / 1_000_000
            let startedMs = report.timestampMs - min(report.timestampMs, hang.durationMs)
            if lastSeenMs > startedMs { hang.durationMs = max(hang.durationMs, lastSeenMs - startedMs) }
            report.hang = hang
            found.append((CrashReportStore.ReportFile(url: directory.appendingPathComponent(name)), report))
        }
        return found
    }

    /// Whether launch `insertId` left a hang file in `directory` (a process that died hung, or one still hung).
    static func exists(launch insertId: String, in directory: URL) -> Bool {
        guard let folder = ReportDirectory(path: directory.path) else { return false }
        return folder.ownedRegularFile(name(forLaunch: insertId)) != nil
    }
}
