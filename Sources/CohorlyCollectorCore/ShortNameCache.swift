import CohorlySymbols
import Foundation

/// The short names (``Demangler/shortName(function:rawFunction:)``) of the Swift linkage names grouping meets in
/// events that carry none (events of earlier SDKs, frames the collector looked up itself): demangling one costs
/// microseconds, and a collector sees the same few functions again and again. Bounded: emptied when full.
final class ShortNameCache: @unchecked Sendable {
    /// The collector's cache.
    static let shared = ShortNameCache()

    /// Names kept at most.
    static let capacity = 4096

    private let lock = NSLock()
    private var names: [String: String] = [:]

    /// The short name of `rawFunction` (a Swift linkage name), `function` its full name.
    func shortName(function: String?, rawFunction: String) -> String {
        if let known = lock.withLock({ names[rawFunction] }) { return known }
        let short = Demangler.shortName(function: function, rawFunction: rawFunction) ?? rawFunction
        lock.withLock {
            if names.count >= Self.capacity { names.removeAll(keepingCapacity: true) }
            names[rawFunction] = short
        }
        return short
    }
}
