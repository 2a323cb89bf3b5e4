// `CohorlyValue` and `Properties` live in CohorlyJSON (shared with the collector); users of the client see them
// through `import Cohorly`.
@_exported import CohorlyJSON
