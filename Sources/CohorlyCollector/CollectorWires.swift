// The collector with every vendor's ingestion wire: the core (module CohorlyCollectorCore: routes, storage, issues,
// web pages, the read and admin API) and one target per vendor family, each answering its own wire through
// `IngestionWire`. Programs that run a collector (`cohorly serve`, the tests, the fuzz harness) import this module.
@_exported import CohorlyCollectorCore
@_exported import CohorlyPostHogIngestion
@_exported import CohorlySentryIngestion

/// The ingestion wires a collector answers besides its own routes: one line per vendor family.
package enum CollectorWires {
    package static let all: [any IngestionWire] = SentryWires.all + PostHogWires.all
}

extension Collector {
    /// Opens the storage and locks the data directory (a second collector on it is refused until this one is
    /// released), answering every vendor's wire (``CollectorWires``); call `start()` to listen. Throws
    /// `CollectorError` for an empty admin secret or a data directory in use.
    public convenience init(configuration: CollectorConfiguration = CollectorConfiguration()) throws {
        try self.init(configuration: configuration, wires: CollectorWires.all)
    }
}
