// `CohorlyValue` and `Properties` live in CohorlyJSON (shared with the collector); users of the client see them
// through `import Cohorly`. So does the crash model: a queued exception (`QueuedException`) is a
// `CapturedException`.
@_exported import CohorlyCrashModel
@_exported import CohorlyJSON
// The HTTP client (`Transport`, `CurlTransport`) lives in CohorlyHTTPClient, which the CLI uses without the
// analytics client; users of the client see it through `import Cohorly`.
@_exported import CohorlyHTTPClient
