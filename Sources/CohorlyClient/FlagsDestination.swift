/// The flags capability of the `Destination` seam: a destination that can evaluate feature flags conforms to it
/// too (in its own `+Flags` file). The client asks `destination as? FlagsDestination`; a destination without it
/// serves fallbacks only (logged once per evaluation).
///
/// Contract: `evaluateFlags` runs on the client's flags queue (never the caller's thread), blocks until the
/// exchange ends (its own retries included), never throws, and returns `.failure` with a reason for the debug log
/// for anything but a well-formed answer, so the client keeps serving what it had.
package protocol FlagsDestination: AnyObject, Sendable {
    /// Evaluates every flag (or only `request.keys`) for `request.distinctId`.
    func evaluateFlags(_ request: FlagsRequest, transport: any Transport, options: CohorlyOptions) -> FlagsAnswer
}

/// What the client asks a flags evaluation for.
package struct FlagsRequest: Sendable {
    /// The identity evaluated.
    package var distinctId: String
    /// The anonymous (device) id of this install.
    package var anonymousId: String
    /// Only these flags (nil: all of them).
    package var keys: [String]? = nil
    /// Person properties to evaluate with (`$device_id` is added), for a destination that takes them.
    package var personProperties: Properties = [:]
    /// Groups by type, for a destination that takes them.
    package var groups: Properties = [:]
    /// Group properties by type, for a destination that takes them.
    package var groupProperties: Properties = [:]
    /// Overrides the destination's GeoIP setting, when it has one.
    package var disableGeoIP: Bool? = nil
}

/// A flags evaluation's result.
package enum FlagsAnswer: Sendable {
    /// The server's flags by key (all of them: a flag absent here is unknown).
    case flags([String: EvaluatedFlag])
    /// Only some flags could be computed (the server said it erred on others): these replace what is served
    /// under their keys, the others stay.
    case partial([String: EvaluatedFlag])
    /// No usable answer (network failure, refusal or malformed body), with why.
    case failure(String)
}
