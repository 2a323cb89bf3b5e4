import CohorlySymbols

/// The naming flags of every command that prints a stack (`symbolicate`, `crashes show`): `--no-sugar` prints
/// full names (`CrashDemo.crash(on: Swift.String, _: @Sendable () -> ()) -> Swift.Never`, as `swift-demangle
/// --no-sugar` does; `--full-names` is the same), `--simplified` the simplified ones (`crash(on:_:)`, as
/// `swift-demangle --simplified` and the Swift backtracer do). One style holds for every frame of the output.
package enum NamingFlags {
    /// The style the flags ask for, nil when none was given (each command has its default); a usage error when
    /// both a full and the simplified style are asked for.
    package static func style(_ parsed: ParsedArguments) throws(UsageError) -> Demangler.Style? {
        let full = ["--no-sugar", "--full-names"].first { parsed.flags.contains($0) }
        if let full, parsed.flags.contains("--simplified") {
            throw UsageError(reason: "\(full) and --simplified exclude each other")
        }
        return full != nil ? .full : parsed.flags.contains("--simplified") ? .simplified : nil
    }
}
