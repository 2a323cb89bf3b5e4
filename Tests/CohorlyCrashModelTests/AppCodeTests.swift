import CohorlyCrashModel
import Testing

/// The one in-app rule (issue 38 part 2): the module of a mangled name, and what a frame's symbols say.
@Suite struct AppCodeTests {
    @Test func theModuleIsTheLengthPrefixedIdentifierAfterThePrefix() {
        #expect(SwiftMangling.module(of: "$s11Hummingbird6RouterV6handleyyF") == "Hummingbird")
        #expect(SwiftMangling.module(of: "$s12OrdersServer0A10ControllerV5quoteyyF") == "OrdersServer")
        #expect(SwiftMangling.module(of: "_T03App4ShopV5totalSiyF") == "App")
        #expect(SwiftMangling.module(of: "$S3App4ShopV5totalSiyF") == "App")
        // Closures, async pieces, specializations and thunks keep the module of the function they come from.
        #expect(SwiftMangling.module(of: "$s3App4mainyyFyycfU_") == "App")
        #expect(SwiftMangling.module(of: "$s3App4ShopV5totalSiyYaFTQ0_") == "App")
        #expect(SwiftMangling.module(of: "$s3App4ShopV5totalSiyFTf4n_g") == "App")
        #expect(SwiftMangling.module(of: "$s9Framework6RouterV6handleyyxlF3App3CtxV_Tg5") == "Framework")
        #expect(SwiftMangling.module(of: "$s9Framework6RouterV6handleyyxlF3App3CtxV_Tg5TA") == "Framework")
        // The standard substitutions.
        #expect(SwiftMangling.module(of: "$sSS5countSivg") == "Swift")
        #expect(SwiftMangling.module(of: "$ss5printyyypd_SS9separatorSS10terminatortF") == "Swift")
        #expect(SwiftMangling.module(of: "$sScT7sleep3fors6UInt64V_tYaKFZ") == "_Concurrency")
        // An extension's code is in the extension's module.
        #expect(SwiftMangling.module(of: "$sSa3AppE5totalSivg") == "App")
        #expect(SwiftMangling.module(of: "$sScT3AppE4workyyFZ") == "App")
        #expect(SwiftMangling.module(of: "$sSo8NSObjectC3AppE1fyyF") == "App")
        #expect(SwiftMangling.module(of: "$s9Framework6RouterV3AppE9addRoutesyyF") == "App")
        // No module: a thunk between function types, C and C++ names, a length past the end, Punycode.
        #expect(SwiftMangling.module(of: "$sIeg_ytIegr_TR") == nil)
        #expect(SwiftMangling.module(of: "_start") == nil)
        #expect(SwiftMangling.module(of: "_ZN4demo6WidgetIiE7explodeEPKc") == nil)
        #expect(SwiftMangling.module(of: "$s40App") == nil)
        #expect(SwiftMangling.module(of: "$s") == nil)
        #expect(SwiftMangling.module(of: "$s00") == nil)
    }

    static let root = "/home/me/OrdersServer"
    static let code = AppCode(sourceRoot: root + "/")

    static func symbol(_ function: String?, raw: String? = nil, file: String? = nil, inlined: Bool = false)
        -> FrameSymbol
    {
        FrameSymbol(function: function, rawFunction: raw, file: file, line: 1, column: 1, inlined: inlined)
    }

    @Test func sourcesUnderTheRootAreTheAppsAndTheirDependenciesAreNot() {
        let code = Self.code
        #expect(code.sourceRoot == Self.root)
        let app = Self.symbol(
            "App.Shop.total()", raw: "$s3App4ShopV5totalSiyF", file: Self.root + "/Sources/App/Shop.swift")
        #expect(code.verdict(app) == .app)
        let checkout = Self.symbol(
            "Hummingbird.Router.handle()", raw: "$s11Hummingbird6RouterV6handleyyF",
            file: Self.root + "/.build/checkouts/hummingbird/Sources/Hummingbird/Router.swift")
        #expect(code.verdict(checkout) == .notApp)
        // A package by path beside the root, and a C function of one.
        let beside = Self.symbol("Framework.Router.handle()", file: "/home/me/Framework/Sources/Framework/Router.swift")
        #expect(code.verdict(beside) == .notApp)
        #expect(code.verdict(Self.symbol("c_helper", file: "/home/me/Framework/Sources/CHelper/h.c")) == .notApp)
        #expect(code.verdict(Self.symbol("app_c", file: Self.root + "/Sources/CApp/a.c")) == .app)
        // A directory that only starts like the root is not under it.
        #expect(code.verdict(Self.symbol("f", file: Self.root + "Tools/Sources/T/t.swift")) == .notApp)
        // Without a root the checkout rule still holds; a path alone says nothing more.
        #expect(AppCode().verdict(checkout) == .notApp)
        #expect(AppCode().verdict(app) == nil)
        // Without a file, the module: the toolchain's are not the app's, others say nothing.
        #expect(code.verdict(Self.symbol("Swift.Array.subscript", raw: "$sSayxSicig")) == .notApp)
        #expect(
            code.verdict(Self.symbol("Hummingbird.Router.handle()", raw: "$s11Hummingbird6RouterV6handleyyF")) == nil)
        #expect(code.verdict(Self.symbol("some_c_function")) == nil)
    }

    @Test func thunksStartUpCodeAndTheRecorderAreNeverTheApps() {
        let file = Self.root + "/Sources/App/main.swift"
        let included = AppCode(sourceRoot: Self.root, includeModules: ["App"])
        for name in [
            "partial apply forwarder for closure #1 () -> () in App.main() -> ()",
            "partial apply for closure #1 in App.main()",
            "thunk for @escaping @callee_guaranteed () -> ()",
            "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_guaranteed () -> (@out ())",
            "protocol witness for Framework.Handler.handle(Swift.Int) -> () in conformance App.Shop : Framework.Handler in App",
            "merged App.Shop.total() -> Swift.Int",
            "specialized thunk for @escaping @callee_guaranteed () -> ()",
            "function signature specialization <Arg[0] = Owned To Guaranteed> of generic specialization <App.Ctx, (Swift.Int) -> ()> of partial apply for closure #1 in App.main()",
            "(1) await resume partial function for partial apply for closure #1 in App.main()",
            "_start", "__libc_start_main", "__libc_start_call_main", "cly_handle_signal",
        ] {
            #expect(Self.code.verdict(Self.symbol(name, file: file)) == .notApp, "\(name)")
            #expect(included.verdict(Self.symbol(name, raw: "$s3App4mainyyF", file: file)) == .notApp, "\(name)")
        }
        // Not thunks: app functions, their closures, specializations and async pieces.
        for name in [
            "closure #1 () -> () in App.main() -> ()", "implicit closure #1 in App.Shop.total()",
            "generic specialization <App.Ctx> of App.Shop.total<A>(A) -> ()",
            "(2) suspend resume partial function for App.Shop.total() async -> Swift.Int",
            "function signature specialization <Arg[1] = Exploded> of App.Shop.total() -> Swift.Int",
        ] {
            #expect(Self.code.verdict(Self.symbol(name, file: file)) == .app, "\(name)")
        }
    }

    @Test func moduleListsComeFirst() {
        let code = AppCode(sourceRoot: Self.root, includeModules: ["MyKit"], excludeModules: ["Vendored"])
        let fetched = Self.symbol(
            "MyKit.f()", raw: "$s5MyKit1fyyF", file: Self.root + "/.build/checkouts/mykit/Sources/MyKit/f.swift")
        #expect(code.verdict(fetched) == .included)
        let nested = Self.symbol("Vendored.g()", raw: "$s8Vendored1gyyF", file: Self.root + "/Vendor/Sources/V/g.swift")
        #expect(code.verdict(nested) == .notApp)
        // An included module is in-app whatever its image; app code only in an in-app image.
        #expect(code.isInApp([fetched], imageInApp: false))
        let app = Self.symbol("App.f()", raw: "$s3App1fyyF", file: Self.root + "/Sources/App/f.swift")
        #expect(code.isInApp([app], imageInApp: true))
        #expect(!code.isInApp([app], imageInApp: false))
    }

    @Test func aFrameIsTheAppsWhenOneOfItsFunctionsIs() {
        let app = Self.symbol(
            "App.Shop.total()", raw: "$s3App4ShopV5totalSiyF", file: Self.root + "/Sources/App/S.swift")
        let witness = Self.symbol(
            "protocol witness for Framework.Handler.handle() in conformance App.Shop : Framework.Handler in App")
        let stdlib = Self.symbol("Swift.Array.subscript.getter", raw: "$sSayxSicig", inlined: true)
        let framework = Self.symbol("Framework.Router.run()", file: "/home/me/Framework/Sources/Framework/R.swift")
        // App code inlined into a thunk: the frame runs the app's code.
        #expect(Self.code.isInApp([Self.inlined(app), witness], imageInApp: true))
        // The standard library inlined into an app function.
        #expect(Self.code.isInApp([stdlib, app], imageInApp: true))
        #expect(!Self.code.isInApp([witness], imageInApp: true))
        #expect(!Self.code.isInApp([stdlib, framework], imageInApp: true))
        // Symbols that say nothing, or none: the image's answer.
        #expect(Self.code.isInApp([Self.symbol("some_c_function")], imageInApp: true))
        #expect(!Self.code.isInApp([Self.symbol("some_c_function")], imageInApp: false))
        #expect(Self.code.isInApp([], imageInApp: true))
        // A frame the device named keeps its answer; one it left raw is decided once named.
        let raw = CapturedException.StackFrame(Frame(Address(0x1000), kind: .returnAddress), inApp: true)
        #expect(!raw.inApp(namedBy: [framework], code: Self.code))
        #expect(raw.inApp(namedBy: [app], code: Self.code))
        #expect(raw.inApp(namedBy: [], code: Self.code))
        let named = CapturedException.StackFrame(raw.frame, inApp: true, symbols: [framework])
        #expect(named.inApp(namedBy: [framework], code: Self.code))
    }

    @Test func theRootIsTheCompilationDirectoryOfMain() {
        #expect(AppCode.sourceRoot(compilationDirectory: "/home/me/OrdersServer") == "/home/me/OrdersServer")
        #expect(
            AppCode.sourceRoot(
                compilationDirectory: "/home/me/OrdersServer/.build/x86_64-unknown-linux-gnu/debug/App.build")
                == "/home/me/OrdersServer")
        #expect(AppCode.sourceRoot(compilationDirectory: "/home/me/OrdersServer/") == "/home/me/OrdersServer")
        #expect(AppCode.sourceRoot(compilationDirectory: "relative") == nil)
    }

    static func inlined(_ symbol: FrameSymbol) -> FrameSymbol {
        var symbol = symbol
        symbol.inlined = true
        return symbol
    }
}
