import Cohorly
import Foundation
import Testing

@testable import CohorlyCrash

/// A client's handled-error settings (event options, rate limiter, clock) are its own: a client made at the
/// memory address of a released client that had set them starts from the defaults. In process (nothing is sent).
struct HandledErrorClientStateTests {
    @Test func aNewClientAtAReusedAddressStartsFromTheDefaults() throws {
        let root = try makeTemporaryDirectory("handled-error-clients")
        defer { try? FileManager.default.removeItem(at: root) }
        var custom = ExceptionEventOptions.default
        custom.symbolicate = false
        custom.maxEventBytes = 12_345
        var addresses: Set<ObjectIdentifier> = []
        var reused = 0
        for index in 0..<40 {
            let client = makeIdleClient(in: root, index: index)
            if !addresses.insert(ObjectIdentifier(client)).inserted { reused += 1 }
            #expect(
                HandledErrors.eventOptions(for: client) == .default, "client \(index) (\(reused) reused addresses)")
            CohorlyCrash.setHandledErrorOptions(HandledErrorOptions(events: custom), for: client)
            #expect(HandledErrors.eventOptions(for: client) == custom)
            client.shutdown()
        }
        // The test means something only if addresses were reused (the allocator hands a freed block back).
        #expect(reused > 0, "no client was made at a released client's address: the test proved nothing")
    }
}
