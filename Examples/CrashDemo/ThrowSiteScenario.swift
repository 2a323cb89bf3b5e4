import Cohorly
import CohorlyCrash
import CrashDemoSupport
import Foundation

/// Scenario `throw-site KIND`: a checkout catches an error thrown two calls below it (in the payment gateway) and
/// captures it, then flushes and exits 0 (1 when the event was not delivered). KIND is how the error is thrown and
/// caught: `struct`, `enum`, `class` (caught as `any Error`), `rethrow` (the service catches and throws it on),
/// `bound` (`catch let e as GatewayDeclined`), `fresh` (a new error captured, never thrown), `chained` (a hook
/// that counts throws was installed before the SDK's; prints `chained_calls N`), `async` (the gateway is async
/// and throws after an await, on an executor thread) and `off` (throw sites turned off in the options, which
/// `main.swift` reads).
enum ThrowSiteScenario {
    static let kinds = ["struct", "enum", "class", "rethrow", "bound", "fresh", "chained", "async", "off"]

    static func run(_ kind: String, cohorly: Cohorly) async -> Never {
        switch kind {
        case "struct", "chained", "off": checkout(cohorly) { try PaymentGateway.charge(GatewayDeclined(code: 51)) }
        case "enum": checkout(cohorly) { try PaymentGateway.charge(GatewayFailure.timeout) }
        case "class": checkout(cohorly) { try PaymentGateway.charge(GatewayReset()) }
        case "rethrow": checkout(cohorly) { try PaymentService.payRethrowing() }
        case "bound":
            do { try PaymentService.pay { try PaymentGateway.charge(GatewayDeclined(code: 51)) } } catch let declined
                as GatewayDeclined
            { cohorly.captureError(declined) } catch { cohorly.captureError(error) }
        case "fresh": cohorly.captureError(GatewayDeclined(code: 7))
        case "async": await checkoutAsync(cohorly)
        default: usage("unknown throw-site kind '\(kind)' (\(kinds.joined(separator: ", ")))")
        }
        if kind == "chained" { say("chained_calls \(demo_counting_throw_hook_calls())") }
        exit(await cohorly.flush() ? 0 : 1)
    }

    @inline(never)
    static func checkout(_ cohorly: Cohorly, _ charge: () throws -> Void) {
        do {
            try PaymentService.pay(charge)
        } catch {
            cohorly.captureError(error)
        }
    }
}

struct GatewayDeclined: Error { var code: Int }
enum GatewayFailure: Error { case timeout, refused }
final class GatewayReset: Error {}

extension ThrowSiteScenario {
    @inline(never)
    static func checkoutAsync(_ cohorly: Cohorly) async {
        do {
            try await PaymentService.payAsync()
        } catch {
            cohorly.captureError(error)
        }
    }
}

enum PaymentService {
    @inline(never)
    static func payAsync() async throws {
        try await PaymentGateway.chargeAsync(GatewayDeclined(code: 71))
        _ = demo_identity(1)
    }

    @inline(never)
    static func pay(_ charge: () throws -> Void) throws {
        try charge()
        _ = demo_identity(1)
    }

    @inline(never)
    static func payRethrowing() throws {
        do {
            try pay { try PaymentGateway.charge(GatewayDeclined(code: 61)) }
        } catch {
            _ = demo_identity(2)
            throw error
        }
    }
}

enum PaymentGateway {
    @inline(never)
    static func chargeAsync(_ failure: some Error) async throws {
        await Task.yield()
        if demo_identity(1) == 1 { throw failure }
    }

    @inline(never)
    static func charge(_ failure: some Error) throws {
        if demo_identity(1) == 1 { throw failure }
    }
}
