import CohorlyCrashModel
import Testing

/// The normal form of function names (FunctionName.swift), on names taken from real builds: the Swift 6.3
/// toolchain's libswiftCore.so and libswift_Concurrency.so (`nm` then `swift-demangle`, full and `--simplified`).
@Suite struct FunctionNameTests {
    /// (name as demangled, normal form).
    static let names: [(String, String)] = [
        // libswiftCore: a function-signature specialization of a generic specialization, in full…
        (
            "function signature specialization <Arg[1] = Dead, Arg[3] = Dead> of generic specialization "
                + "<Swift.UnsafeBufferPointer<Swift.UInt8>, Swift.Unicode.ASCII> of static Swift.String._fromCodeUnits"
                + "<A, B where A: Swift.Collection, B: Swift._UnicodeEncoding, A.Element == B.CodeUnit>(_: A, "
                + "encoding: B.Type, repair: Swift.Bool) -> (Swift.String, repairsMade: Swift.Bool)?",
            "static Swift.String._fromCodeUnits<A, B where A: Swift.Collection, B: Swift._UnicodeEncoding, "
                + "A.Element == B.CodeUnit>(_: A, encoding: B.Type, repair: Swift.Bool) -> (Swift.String, "
                + "repairsMade: Swift.Bool)?"
        ),
        // …and simplified, as the stack text prints it.
        (
            "specialized static String._fromCodeUnits<A, B>(_:encoding:repair:)",
            "static String._fromCodeUnits<A, B>(_:encoding:repair:)"
        ),
        // A merged function.
        (
            "merged generic specialization <Swift.Int> of _swift_se0349_UnsafeMutableRawBufferPointer_storeBytes",
            "_swift_se0349_UnsafeMutableRawBufferPointer_storeBytes"
        ),
        (
            "specialized _swift_se0349_UnsafeMutableRawBufferPointer_storeBytes",
            "_swift_se0349_UnsafeMutableRawBufferPointer_storeBytes"
        ),
        // libswift_Concurrency: the pieces of async functions.
        (
            "(2) suspend resume partial function for Swift.TaskGroup.awaitAllRemainingTasks() async -> ()",
            "Swift.TaskGroup.awaitAllRemainingTasks() async -> ()"
        ),
        (
            "(1) suspend resume partial function for Swift.TaskGroup.next(isolation: isolated Swift.Actor?) async -> A?",
            "Swift.TaskGroup.next(isolation: isolated Swift.Actor?) async -> A?"
        ),
        // A specialization inside an async piece: both go.
        (
            "(1) suspend resume partial function for specialized OrdersController.lineItem<A>(id:context:)",
            "OrdersController.lineItem<A>(id:context:)"
        ),
        // Nested brackets in a specialization's arguments.
        (
            "function signature specialization <Arg[0] = [Closure Propagated : closure #1 <A>() -> () in f<A>(), "
                + "Argument Types : []]> of g() -> ()",
            "g() -> ()"
        ),
        // Left as they are: names without such a prefix, thunks, C++, and prefixes without a function after them.
        ("TaskGroup.next(isolation:)", "TaskGroup.next(isolation:)"),
        ("closure #1 in startService(_:)", "closure #1 in startService(_:)"),
        ("partial apply for closure #1 in startService(_:)", "partial apply for closure #1 in startService(_:)"),
        ("demo::Widget<int>::explode(char const*)", "demo::Widget<int>::explode(char const*)"),
        ("(x) suspend resume partial function for Shop.odd()", "(x) suspend resume partial function for Shop.odd()"),
        ("(1)suspend resume partial function for Shop.odd()", "(1)suspend resume partial function for Shop.odd()"),
        (
            "(\u{663}) suspend resume partial function for Shop.odd()",
            "(\u{663}) suspend resume partial function for Shop.odd()"
        ),
        ("(1) suspend resume partial function for ", "(1) suspend resume partial function for "),
        ("specialized ", "specialized "),
        ("generic specialization <Swift.Int", "generic specialization <Swift.Int"),
        ("", ""),
    ]

    @Test func namesAreNormalized() {
        for (name, normal) in Self.names {
            #expect(FunctionName.normalized(name) == normal, "\(name)")
            // Idempotent: a name in normal form stays as it is.
            #expect(FunctionName.normalized(normal) == normal, "\(normal)")
        }
    }

    @Test func theModuleOfALinkageName() {
        #expect(
            SwiftMangling.module(of: "$s9CrashDemo14PricingServiceV5total5cents6couponS2i_SStF")
                == "CrashDemo")
        #expect(SwiftMangling.module(of: "$sSa15_checkSubscript_20wasNativeTypeCheckedySi_SbtF") == "Swift")
        #expect(
            SwiftMangling.module(
                of: "$ss17_assertionFailure__4file4line5flagss5NeverOs12StaticStringV_SSAHSus6UInt32VtF")
                == "Swift")
        #expect(SwiftMangling.module(of: "_ZN4demo6WidgetIiE7explodeEPKc") == nil)
        #expect(SwiftMangling.module(of: "demo_null_write") == nil)
        #expect(SwiftMangling.module(of: "$s99Short") == nil)
    }
}
