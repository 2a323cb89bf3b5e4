import CohorlyCrashModel
import Testing

/// The short form made from a full demangled signature alone (FunctionName+Demangled.swift), against the
/// toolchain: each pair is `swift-demangle --compact` and `swift-demangle --compact --simplified` of one symbol of
/// the CrashDemo debug build (Swift 6.3.1), the simplified one in normal form.
@Suite struct FunctionNameShortTests {
    static let pairs: [(full: String, short: String)] = [
        ("App.startService(Swift.String) async -> Swift.String", "startService(_:)"),
        (
            "static CrashDemo.HangDemo.run(_: Swift.String, options: CrashDemo.DemoOptions) -> Swift.Never",
            "static HangDemo.run(_:options:)"
        ),
        ("CrashDemo.CrashKind.init(rawValue: Swift.String) -> CrashDemo.CrashKind?", "CrashKind.init(rawValue:)"),
        (
            "CrashDemo.CatalogStore.init(discounts: [Swift.String : Swift.Int]) -> CrashDemo.CatalogStore",
            "CatalogStore.init(discounts:)"
        ),
        (
            "(2) suspend resume partial function for CrashDemo.localStore(Swift.String) async throws -> Swift.Int",
            "localStore(_:)"
        ),
        ("CrashDemo.StuckActor.blockForever(Dispatch.DispatchSemaphore) async -> ()", "StuckActor.blockForever(_:)"),
        ("CrashDemo.groupRoute() async throws -> Swift.Int", "groupRoute()"),
        ("CrashDemo.opaqueStop.getter : Swift.Int", "opaqueStop.getter"),
        (
            "static CrashDemo.ExitScenario.signalQueue.getter : Dispatch.DispatchQueue",
            "static ExitScenario.signalQueue.getter"
        ),
        ("CrashDemo.CatalogStore.discounts.modify : [Swift.String : Swift.Int]", "CatalogStore.discounts.modify"),
        (
            "closure #1 (Swift.String) -> Swift.UnsafeMutablePointer<Swift.Int8>? in static "
                + "CrashDemo.ExitScenario.execProgram([Swift.String]) -> Swift.Never",
            "closure #1 in static ExitScenario.execProgram(_:)"
        ),
        (
            "closure #1 (inout Swift.TaskGroup<Swift.Int>) async -> Swift.Int in closure #1 () async -> () in static "
                + "CrashDemo.AsyncParking.runToEndThenCrash() -> Swift.Never",
            "closure #1 in closure #1 in static AsyncParking.runToEndThenCrash()"
        ),
        (
            "(1) await resume partial function for partial apply forwarder for closure #1 () async -> () in static "
                + "CrashDemo.AsyncParking.park() -> ()",
            "partial apply for closure #1 in static AsyncParking.park()"
        ),
        // A generic function's requirements go, its parameters stay (the simplified form of the demo's handler).
        (
            "CrashDemo.OrdersController.lineItem<A where A: CrashDemo.RequestContext>(id: Swift.String, context: A) "
                + "async throws -> Swift.Int",
            "OrdersController.lineItem<A>(id:context:)"
        ),
        ("CrashDemo.crash(on: Swift.String, _: () -> ()) -> Swift.Never", "crash(on:_:)"),
    ]

    @Test func aFullSignatureReadsAsTheStackPrintsIt() {
        for (full, short) in Self.pairs { #expect(FunctionName.short(demangled: full) == short, "\(full)") }
    }

    /// What is not a full signature stays as it is: the short form, C and C++ names, an offset, other entities.
    @Test func otherNamesStayAsTheyAre() {
        for name in [
            "startService(_:)", "OrdersController.lineItem<A>(id:context:)", "Cart.total.getter", "cly_capture",
            "demo::Widget<int>::explode(char const*)", "Shop +0x1f3a", "",
            "variable initialization expression of CrashDemo.DemoOptions.word : Swift.String",
            "job #1 @Sendable () -> () in static CrashDemo.HangDemo.busy(seconds: Swift.Double) -> ()",
        ] {
            #expect(FunctionName.short(demangled: name) == name, "\(name)")
        }
    }
}
