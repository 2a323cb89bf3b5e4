/// A function's name as an issue shows and keys it: its **normal form**, one spelling for a debug and a release
/// build of the same code.
///
/// The normal form of a frame is made from the name the stack text prints (`Demangler` in CohorlySymbols makes it
/// from the linkage name: the Swift runtime's backtracer's simplified form, `startService(_:)`; a C or C++ name as
/// it is) with what the optimizer adds taken off its front, again until nothing is left to take:
///
/// - `specialized ` and `merged ` (the simplified form's markers of a generic or function-signature
///   specialization and of a function merged with an identical one);
/// - `function signature specialization <…> of `, `generic specialization <…> of ` and
///   `generic partial specialization <…> of ` (the same, as the full demangled form spells them);
/// - `(N) suspend resume partial function for ` and `(N) await resume partial function for ` (the piece of an async
///   function where it resumed: the function that was written).
///
/// So `function signature specialization <Arg[1] = Exploded> of generic specialization <Shop.BasicContext> of
/// Shop.OrdersController.lineItem<A>(…)` as a release build names it and the debug build's `OrdersController.
/// lineItem<A>(id:context:)` both read `OrdersController.lineItem<A>(id:context:)` once shortened. Nothing else
/// changes: a closure, a thunk or a C++ name stays what it is.
public enum FunctionName {
    /// The normal form of `name` (the stack text's form of a frame's function; see the type's summary).
    public static func normalized(_ name: String) -> String {
        var rest = Substring(name)
        while let next = withoutOnePrefix(rest), !next.isEmpty { rest = next }
        return String(rest)
    }

    /// `name` without the first optimizer prefix it starts with; nil when it starts with none.
    private static func withoutOnePrefix(_ name: Substring) -> Substring? {
        for marker in ["specialized ", "merged "] where name.hasPrefix(marker) {
            return name.dropFirst(marker.count)
        }
        for head in [
            "function signature specialization <", "generic specialization <", "generic partial specialization <",
        ] where name.hasPrefix(head) {
            // The bracket's contents nest (`<Arg[1] = Closure [… <A> …]>`): find its own closing one.
            var depth = 0
            var index = name.index(name.startIndex, offsetBy: head.count - 1)
            var previous: Character = " "
            while index < name.endIndex {
                let character = name[index]
                if character == "<" { depth += 1 }
                // The `>` of a function type's `->` closes nothing.
                if character == ">" && previous != "-" {
                    depth -= 1
                    if depth == 0 { break }
                }
                previous = character
                index = name.index(after: index)
            }
            guard index < name.endIndex else { return nil }
            let after = name[name.index(after: index)...]
            return after.hasPrefix(" of ") ? after.dropFirst(4) : nil
        }
        return withoutAsyncPiece(name)
    }

    /// `F` of `(N) suspend resume partial function for F` or `(N) await resume partial function for F` (as Swift's
    /// demangler names the pieces of an async function); nil for any other name.
    private static func withoutAsyncPiece(_ name: Substring) -> Substring? {
        guard name.hasPrefix("("), let close = name.firstIndex(of: ")") else { return nil }
        let counter = name[name.index(after: name.startIndex)..<close]
        guard !counter.isEmpty, counter.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let rest = name[close...].dropFirst()
        for piece in [" suspend resume partial function for ", " await resume partial function for "]
        where rest.hasPrefix(piece) {
            return rest.dropFirst(piece.count)
        }
        return nil
    }
}
