import CohorlyCollectorCore

/// A Sentry `session` item (docs/sentry.md "Release health"), checked as Relay checks a session update before it
/// counts it: a JSON object with `started` (RFC 3339), `attrs.release` (non-empty), and when present a `sid`
/// that is a UUID, a `status` Relay knows, a non-negative integer `errors`, a non-negative `duration`, a boolean
/// `init`, a string `did`, an RFC 3339 `timestamp`. Stored as sent, among the records of kind ``kind``; read
/// back with `GET /api/sessions`.
enum SentrySession {
    /// The records kind sessions are stored under (the collector's release-health sessions).
    static let kind = CollectorStore.sessionRecordKind
    /// The statuses of a session update.
    static let statuses: Set<String> = ["ok", "exited", "crashed", "abnormal", "errored"]

    /// Why a session update is invalid.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// The session as it is stored, or why it is dropped.
    static func checked(_ payload: ArraySlice<UInt8>) -> Result<JSONValue, Problem> {
        guard let session = JSONValue(bytes: Array(payload)), session.objectValue != nil else {
            return .failure(Problem(description: "not a JSON object"))
        }
        func time(_ key: String) -> Bool { session[key]?.stringValue.flatMap(RFC3339.milliseconds) != nil }
        guard time("started") else { return .failure(Problem(description: "`started` is missing or not RFC 3339")) }
        guard let release = session["attrs"]?["release"]?.stringValue, !release.isEmpty else {
            return .failure(Problem(description: "`attrs.release` is missing"))
        }
        if let sid = session["sid"], sid.stringValue.flatMap(SentryEnvelope.eventId) == nil {
            return .failure(Problem(description: "`sid` is not a UUID"))
        }
        if let status = session["status"], !(status.stringValue.map(statuses.contains) ?? false) {
            return .failure(Problem(description: "unknown `status` \(status.jsonString.prefix(40))"))
        }
        if let errors = session["errors"], (errors.intValue ?? -1) < 0 {
            return .failure(Problem(description: "`errors` is not a non-negative integer"))
        }
        if let duration = session["duration"], duration != .null, !((duration.doubleValue ?? -1) >= 0) {
            return .failure(Problem(description: "`duration` is not a non-negative number"))
        }
        if let initial = session["init"], initial != .bool(true), initial != .bool(false) {
            return .failure(Problem(description: "`init` is not a boolean"))
        }
        if let did = session["did"], did != .null, did.stringValue == nil {
            return .failure(Problem(description: "`did` is not a string"))
        }
        if session["timestamp"] != nil, !time("timestamp") {
            return .failure(Problem(description: "`timestamp` is not RFC 3339"))
        }
        return .success(session)
    }
}
