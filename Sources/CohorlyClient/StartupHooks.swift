import CStartupHooks
import Foundation

/// What the client tells the parts linked with it as it starts, without importing them (CStartupHooks).
enum StartupHooks {
    /// Right before the queue's SQLite files are made in `directory` (made already): the crash recorder, when the
    /// app links it, takes its crash report's disk reserve there first, so that on a nearly full disk the queue
    /// cannot take the space a crash report needs, whatever order the app calls `Cohorly.initialize` and
    /// `CohorlyCrash.install` in (install moves the reserve into the report directory).
    static func beforeQueueOpens(in directory: URL) {
        cly_startup_before_queue_opens(directory.path)
    }
}
