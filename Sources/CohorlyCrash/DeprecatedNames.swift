// CohorlyCrash's public types under their former names, so apps written against them still compile (with a
// deprecation warning that names the new one). Nothing in this package uses them.

/// The former name of ``ExceptionBuilder``.
@available(*, deprecated, renamed: "ExceptionBuilder")
public typealias ExceptionEvent = ExceptionBuilder

/// The former name of ``NonFatalException``.
@available(*, deprecated, renamed: "NonFatalException")
public typealias LiveException = NonFatalException
