import Testing

@testable import CohorlyCollector

/// Stored `$exception` events come from the network: reading them back never traps.
@Suite struct CrashQueriesTests {
    @Test func hostileDebugImagesAndFramesAreReadAsUnknownNotTrappedOn() {
        // What the ingestion fuzzer found (fixtures/fuzz/ingestion/crash-negative-image-size): a negative size.
        let properties: JSONValue = [
            "$debug_images": [
                ["code_file": "/a", "image_addr": "0x1000", "image_size": -5],
                ["code_file": "/b", "image_addr": "0xzz", "image_size": 10],
                ["code_file": "/c", "image_addr": "0x2000", "image_size": "0x100", "code_id": "not hex"],
            ],
            "$exception_list": [["stacktrace": ["frames": [["instruction_addr": "0x1010"], ["instruction_addr": 7]]]]],
        ]
        let input = CrashQueries.input(from: properties)
        #expect(input.images.map(\.path) == ["/a", "/c"])
        #expect(input.images.map(\.size) == [0, 0x100])
        #expect(input.images.allSatisfy { $0.buildId == nil })
        #expect(input.threads.first?.addresses == [0x1010])
    }
}
