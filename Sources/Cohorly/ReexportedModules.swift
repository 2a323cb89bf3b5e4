// `import Cohorly` is the client with every destination: the core (`Cohorly.initialize`, the queue, the Cohorly
// API's destination) and each destination's family, which adds its own `Cohorly.initialize(…)`.
@_exported import CohorlyClient
@_exported import CohorlyPostHog
@_exported import CohorlySentry
