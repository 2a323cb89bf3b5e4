import Cohorly
import Foundation
import Testing

@testable import CohorlyCrash

/// Breadcrumbs are recorded for every client, also one made at the memory address a released client had: the
/// "already observed" state belongs to the client, not to a table keyed by its address. In process (clients with
/// their own queues, a collector is not needed: nothing is flushed).
struct BreadcrumbClientStateTests {
    @Test func everyNewClientRecordsBreadcrumbsEvenAtAReusedAddress() throws {
        BreadcrumbRecorder.configure(maxBreadcrumbs: 50)
        let root = try makeTemporaryDirectory("breadcrumb-clients")
        defer { try? FileManager.default.removeItem(at: root) }
        let tag = UUID().uuidString.prefix(8)
        var addresses: Set<ObjectIdentifier> = []
        var reused = 0
        for index in 0..<40 {
            let client = makeIdleClient(in: root, index: index)
            if !addresses.insert(ObjectIdentifier(client)).inserted { reused += 1 }
            BreadcrumbRecorder.observe(client)
            BreadcrumbRecorder.observe(client)  // twice: still one breadcrumb per track
            let message = "probe-\(tag)-\(index)"
            client.track(message)
            let found = BreadcrumbRecorder.snapshot().breadcrumbs.filter { $0.message == message }
            #expect(found.count == 1, "client \(index) (\(reused) reused addresses so far)")
            client.shutdown()
        }
        print("breadcrumb clients: \(reused) of 40 made at a reused address")
    }
}
