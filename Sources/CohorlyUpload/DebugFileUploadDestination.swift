/// The seam every `cohorly debug-files upload` destination sits behind: our collector (``CollectorUpload``), and
/// each vendor's family (CohorlySentryUpload, CohorlyPostHogUpload). A destination is configured by its own
/// initializer (where, which credentials, how long to wait); ``upload(_:)`` then finds the debug files under the
/// paths (``DebugFileSurvey``), sends what the destination lacks and says what became of each file. It never
/// prints and never exits: the caller prints the ``UploadRun`` (and its ``UploadRun/warnings``) and chooses the
/// exit status.
package protocol DebugFileUploadDestination {
    /// Surveys `paths` (files, or directories walked recursively), uploads what the destination lacks, and
    /// returns the outcome of every file found, with the reason of a failure that stopped the whole run.
    func upload(_ paths: [String]) -> UploadRun
}
