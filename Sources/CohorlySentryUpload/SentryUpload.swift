import CohorlyUpload
import Foundation

/// Sentry as a `debug-files upload` destination: the files our own upload would take (``DebugFileSurvey``) sent
/// to Sentry by its chunk-upload protocol (``SentryChunkAPI``), as `sentry-cli debug-files upload` does: the
/// server's options first; each file hashed in chunks (``SentryDebugFile``); one assemble call tells which chunks
/// the server lacks; only those are sent (gzipped when offered), as many per request as it allows; then the files
/// are assembled, polled until `ok` or `error` for at most ``maxWait`` seconds. The auth token never appears in
/// the run's messages.
package struct SentryUpload: DebugFileUploadDestination {
    /// Sentry's own address, used when no other is given.
    package static let defaultURL = "https://sentry.io/"
    /// Files per assemble call.
    static let assembleBatch = 50

    /// The server, organization, project and token, and the retries of each call.
    package var api: SentryChunkAPI
    /// The longest wait for the server to assemble the files, in seconds. Default 300.
    package var maxWait = 300.0
    /// The first wait between two assemble polls, in seconds, doubled up to 5 s. Default 0.5.
    package var pollDelay = 0.5

    /// An upload through `api`.
    package init(api: SentryChunkAPI) { self.api = api }

    /// Survey, hash, ask, send what is missing, assemble and wait.
    package func upload(_ paths: [String]) -> UploadRun {
        var run = Self.perform(api, paths: paths, maxWait: maxWait, pollDelay: pollDelay)
        run.fatal = run.fatal.map { $0.replacingOccurrences(of: api.token, with: "<token>") }
        return run
    }
}
