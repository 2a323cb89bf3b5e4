import CrashDemoSupport
import Foundation

// A server's code without a framework (scenarios `server-*`): route handlers on a task call a struct service, a
// generic handler is specialized for the one request context it is called with, and small accessors are left to
// the optimizer, as a server team writes them — so a release build inlines what a debug build calls, and names
// the handler `specialized …` or `function signature specialization <…> of generic specialization <…> of …`.
// The same bug in both builds must be one issue with one title (IssueNamingTests).

/// The server scenarios.
enum ServerScenarios {
    static let names = ["server-unwrap", "server-unwrap-traced", "server-index", "server-generic"]

    /// Starts the route of scenario `name` on a task and blocks the calling thread (the crash ends the process).
    static func run(_ name: String) -> Never {
        Task.detached {
            let status: Int
            switch name {
            case "server-unwrap": status = await OrdersRoutes.quote(coupon: "NOPE")
            case "server-unwrap-traced": status = await OrdersRoutes.quoteTraced(coupon: "NOPE")
            case "server-index": status = await OrdersRoutes.line(at: opaqueIndex)
            default: status = await OrdersRoutes.lineItem(id: "sku-\(opaqueIndex)")
            }
            print(status)
        }
        while true { sleep(60) }
    }
}

/// The catalog's discounts: its accessor is small, and a release build inlines it into its caller.
struct CatalogStore {
    var discounts: [String: Int] = ["WELCOME": 10, "SPRING": 15]

    /// The discount of a coupon: force-unwrapped, so a missing coupon traps here.
    @inline(__always) func discountPercent(for code: String) -> Int { discounts[code]! }
}

/// The service the routes call.
struct PricingService {
    var catalog = CatalogStore()
    var lines = [1200, 300, 50]

    @inline(never) func total(cents: Int, coupon: String) -> Int {
        cents - cents * catalog.discountPercent(for: coupon) / 100 + demo_identity(0)
    }

    @inline(never) func lineTotal(at index: Int) -> Int { lines[index] * 2 + demo_identity(0) }
}

/// A request context, as a framework makes one per request and passes to generic handlers.
protocol RequestContext: Sendable {
    var requestId: String { get }
}

struct BasicRequestContext: RequestContext {
    var requestId: String
    var attempt: Int
}

/// Handlers generic over the request context, as a framework's router calls them.
struct OrdersController {
    var stock: [String: Int] = ["sku-1": 4]

    @inline(never) func lineItem<Context: RequestContext>(id: String, context: Context) async -> Int {
        await Task.yield()
        lastCrashFunction = "lineItem"
        return stock[id + context.requestId]! + demo_identity(0)  // no such item
    }
}

/// A span around an operation (a stand-in for swift-distributed-tracing's `withSpan`).
@inline(never) func withSpan<T: Sendable>(_ name: String, _ operation: () async -> T) async -> T {
    let result = await operation()
    return result
}

/// The routes: each awaits, then calls the service.
enum OrdersRoutes {
    @inline(never) static func quote(coupon: String) async -> Int {
        await Task.yield()
        lastCrashFunction = "total"
        return PricingService().total(cents: 1550, coupon: coupon) + demo_identity(0)
    }

    @inline(never) static func quoteTraced(coupon: String) async -> Int {
        await withSpan("quote") { await quote(coupon: coupon) } + demo_identity(0)
    }

    @inline(never) static func line(at index: Int) async -> Int {
        await Task.yield()
        lastCrashFunction = "lineTotal"
        return PricingService().lineTotal(at: index) + demo_identity(0)
    }

    @inline(never) static func lineItem(id: String) async -> Int {
        let context = BasicRequestContext(requestId: "-\(demo_identity(7))", attempt: demo_identity(1))
        return await OrdersController().lineItem(id: id, context: context) + demo_identity(0)
    }
}
