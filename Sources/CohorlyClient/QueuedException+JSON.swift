import CohorlyCrashModel

/// The queue's JSON of an exception record: the crash model's JSON of the exception
/// (``CapturedException/jsonValue``). Rows the previous version wrote (its own layout of the event) are read as
/// well (``init(legacyQueueValue:)``), so nothing queued before an upgrade is lost.
extension QueuedException {
    /// The record as queue JSON.
    package var json: String { exception.jsonValue.jsonString }

    /// The record `json` holds (nil when it holds none).
    package init?(json: String) {
        guard let value = CohorlyValue(json: json) else { return nil }
        if let exception = CapturedException(jsonValue: value) {
            self.init(exception)
        } else if let legacy = QueuedException(legacyQueueValue: value) {
            self = legacy
        } else {
            return nil
        }
    }
}
