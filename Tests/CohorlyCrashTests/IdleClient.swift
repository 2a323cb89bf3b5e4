import Cohorly
import Foundation

/// A client that never sends (an hour's flush interval, no flags, no log) with its own queue `q<index>` under
/// `root`: for tests of per-client state, which make many clients in a row so addresses get reused.
func makeIdleClient(in root: URL, index: Int) -> Cohorly {
    var options = CohorlyOptions()
    options.storageDirectory = root.appendingPathComponent("q\(index)")
    options.flushInterval = 3600
    options.loadFeatureFlags = false
    options.logHandler = { _ in }
    return Cohorly(apiHost: URL(fileURLWithPath: "/"), token: "t", options: options)
}
