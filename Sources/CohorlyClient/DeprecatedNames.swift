// The client's public types under their former names, so apps written against them still compile (with a
// deprecation warning that names the new one). Nothing in this package uses them.

/// The former name of ``QueuedException``.
@available(*, deprecated, renamed: "QueuedException")
public typealias ExceptionRecord = QueuedException
