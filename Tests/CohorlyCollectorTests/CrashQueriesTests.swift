import CohorlyCrashModel
import CohorlySymbols
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

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
        #expect(input.images.allSatisfy { LoadedImage(image: $0).buildId == nil })
        #expect(input.threads.first?.frames.map(\.frame) == [Frame(0x1010, kind: .pc)])
    }

    /// An event symbolicated on the device (native frames, inlined calls after their frame) is read back as
    /// one address per physical frame, and where the collector holds no debug file the device's names stand.
    @Test func deviceResolvedFramesAreShownWhereNoDebugFileIsHere() {
        let properties: JSONValue = [
            "$debug_images": [
                [
                    "type": "elf", "code_file": "/somewhere/else/App", "image_addr": "0x1000", "image_size": 4096,
                    "code_id": "0102030405060708090a0b0c0d0e0f1011121314",
                ]
            ],
            "$exception_list": [
                [
                    "type": "Swift runtime failure: Index out of range", "value": "Index out of range",
                    "mechanism": ["type": "swift_fatal", "handled": false, "synthetic": false],
                    "stacktrace": [
                        "type": "raw",
                        "frames": [
                            [
                                "platform": "native", "instruction_addr": "0x1100", "image_addr": "0x1000",
                                "module": "App", "function": "main", "filename": "main.swift", "lineno": 3,
                            ],
                            [
                                "platform": "native", "instruction_addr": "0x1200", "image_addr": "0x1000",
                                "module": "App", "function": "App.run()", "filename": "run.swift", "lineno": 9,
                                "colno": 5,
                            ],
                            [
                                "platform": "native", "instruction_addr": "0x1200", "image_addr": "0x1000",
                                "module": "App", "function": "Swift runtime failure: Index out of range",
                                "inline": true,
                            ],
                        ],
                    ],
                ]
            ],
        ]
        let input = CrashQueries.input(from: properties)
        let thread = input.threads[0]
        // Frames without a kind (an older SDK's event): the innermost exact, the others return addresses.
        #expect(thread.frames.map(\.frame) == [Frame(0x1200, kind: .pc), Frame(0x1100, kind: .returnAddress)])
        #expect(
            thread.frames.map { $0.symbols.map(\.function) } == [
                ["Swift runtime failure: Index out of range", "App.run()"], ["main"],
            ])
        #expect(thread.frames[0].symbols.map(\.inlined) == [true, false])
        // No file with that build id here, and the event's path is never opened: the device's frames stand.
        let locator = DebugFileLocator(searchPaths: [], debugRoots: [], debuginfod: nil)
        locator.mayOpenCodeFile = { _ in false }
        let crash = CrashSymbolicator.symbolicate(input, locator: locator)
        #expect(crash.reason == "Swift runtime failure: Index out of range")
        #expect(crash.threads[0].frames[0].symbols.last?.function == "App.run()")
        #expect(crash.threads[0].frames[0].symbols.last?.line == 9)
        #expect(crash.threads[0].frames[1].symbols.map(\.function) == ["main"])
    }
}
