import CohorlyCrashModel
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The key is read from an event's grouping view (`CapturedException.groupingView`, which reads only what
/// grouping needs); it must come out as from the model read in full, on every shape an event's frames may have.
@Suite struct IssueKeyReadingTests {
    static func frame(
        _ address: String?, kind: String? = nil, inApp: Bool = true, function: String? = nil, file: String? = nil,
        inline: Bool = false, imageAddress: String? = nil, module: String? = nil
    ) -> JSONValue {
        var fields: [String: JSONValue] = ["in_app": .bool(inApp)]
        fields["instruction_addr"] = address.map { .string($0) }
        fields["instruction_addr_kind"] = kind.map { .string($0) }
        fields["function"] = function.map { .string($0) }
        fields["filename"] = file.map { .string($0) }
        fields["inline"] = inline ? true : nil
        fields["image_addr"] = imageAddress.map { .string($0) }
        fields["module"] = module.map { .string($0) }
        return .object(fields)
    }

    /// Events oldest frame first, as the wire has them.
    static let events: [(String, JSONValue)] = [
        (
            "kinds, names, a frame that is not the app's",
            event(frames: [
                frame("0x1000", kind: "return_address", function: "main"),
                frame("0x7000", kind: "return_address", inApp: false, function: "libc_start"),
                frame("0x1100", kind: "pc", function: "Shop.pay()"),
            ])
        ),
        (
            "inlined calls: named, a physical frame with a file only, one with nothing of its own",
            event(frames: [
                frame("0x1200", kind: "return_address", function: "Shop.outer()"),
                frame("0x1200", function: "Shop.inlinedIntoOuter()", inline: true),
                frame("0x1300", kind: "return_address", file: "Shop.swift"),
                frame("0x1300", function: "Shop.inlinedIntoFileOnly()", inline: true),
                frame("0x1400", kind: "pc"),
                frame("0x1400", function: "Shop.firstInlined()", inline: true),
                frame("0x1400", function: "Shop.secondInlined()", inline: true),
            ])
        ),
        (
            "async callers after the frame they continue from, the executor's frames after them",
            event(frames: [
                frame("0x1500", kind: "return_address", function: "Executor.run()"),
                frame("0x1600", kind: "async_resume", function: "Shop.checkout()"),
                frame("0x1700", kind: "async_resume", inApp: false, function: "Lib.awaiting()"),
                frame("0x1800", kind: "return_address", function: "Shop.task()"),
                frame("0x1900", kind: "pc", function: "Shop.crash()"),
            ])
        ),
        (
            "no kinds (an older SDK), an unreadable address whose inlined call joins the frame before",
            event(frames: [
                frame("0x1a00", function: "Shop.a()"),
                frame("not an address", function: "Shop.lost()"),
                frame("0x1a00", function: "Shop.inlinedIntoA()", inline: true),
                .string("not a frame"),
                frame("0x1b00"),
                frame(nil, function: "Shop.noAddress()"),
            ])
        ),
        (
            "images: listed, one a frame widens, one only frames name, a frame outside all",
            event(
                frames: [
                    frame("0x1f00", kind: "return_address", imageAddress: "0x1000", module: "/app/Shop"),
                    frame("0x50020", kind: "return_address", imageAddress: "0x50000", module: "/lib/libPlugin.so"),
                    frame("0x50030", kind: "return_address", imageAddress: "0x50000"),
                    frame("0x90000", kind: "return_address"),
                    frame("0x1010", kind: "pc", function: "cly_record"),
                ],
                images: [
                    ["code_file": "/app/Shop", "image_addr": "0x1000", "image_size": 256, "code_id": "ABCDEF"]
                ])
        ),
        (
            "a signal with no frame of the app",
            .object([
                "$exception_level": "fatal",
                "$exception_list": [
                    [
                        "type": "SIGSEGV", "value": "",
                        "mechanism": [
                            "type": "signal", "meta": ["signal": ["number": 11, "name": "SIGSEGV", "address": "0x8"]],
                        ],
                        "stacktrace": ["frames": [frame("0x7000", inApp: false, function: "memcpy")]],
                    ]
                ],
            ])
        ),
        (
            "a C++ exception",
            .object([
                "$exception_list": [
                    [
                        "type": "std::runtime_error", "value": "boom", "mechanism": ["type": "cxx_exception"],
                        "stacktrace": ["frames": [frame("0x1100", kind: "pc", function: "Shop.parse()")]],
                    ]
                ]
            ])
        ),
        (
            "an inlined call not marked in-app names the in-app frame it joins; one after a frame not in-app does not",
            event(frames: [
                frame("0x2100", kind: "return_address", inApp: false, function: "Lib.call()"),
                frame("0x2100", function: "Shop.inlinedIntoLib()", inline: true),
                frame("0x2000", kind: "pc"),
                frame("0x2000", inApp: false, function: "Shop.inlinedHelper()", inline: true),
            ])
        ),
        ("nothing at all", .object([:])),
    ]

    static func event(frames: [JSONValue], images: [JSONValue] = []) -> JSONValue {
        .object([
            "$exception_level": "error", "$debug_images": .array(images),
            "$exception_list": [
                [
                    "type": "Fatal error", "value": "declined", "mechanism": ["type": "swift_fatal", "handled": false],
                    "stacktrace": ["type": "raw", "frames": .array(frames)],
                ]
            ],
        ])
    }

    @Test(arguments: events.indices)
    func theGroupingViewReadsWhatTheFullModelHas(_ index: Int) {
        let (name, properties) = Self.events[index]
        Self.expectSameKey(properties, name)
    }

    /// The grouping view and the full reading give the same frames, reason and key.
    static func expectSameKey(_ properties: JSONValue, _ name: String) {
        let view = CapturedException.groupingView(exceptionEvent: properties)
        let full = CapturedException(exceptionEvent: properties)
        #expect(view.frames == full.groupingFrames(), "\(name)")
        #expect(view.description == full.description && view.level == full.level, "\(name)")
        let fast = IssueKey(view, custom: nil)
        let slow = IssueKey(full, custom: nil)
        #expect(fast == slow, "\(name)")
    }

    /// The fingerprint is the SHA-256 of the text docs/issues.md describes (the title, then `\n<module>
    /// <culprit>` for the first in-app frame; `?` for a frame without an image): issues a collector stored keep
    /// their key when it is rebuilt.
    @Test func theFingerprintIsTheHashOfTheDocumentedText() {
        let key = IssueKey(CapturedException.groupingView(exceptionEvent: Self.events[0].1), custom: nil)
        // python3 -c 'import hashlib; print(hashlib.sha256(b"Fatal error\n? Shop.pay()").hexdigest())'
        #expect(key.fingerprint == "a518f305ea21e6c4efddfcf383084ff0fcc1807a1357e4bbdea4875e48e842ae")
        let inlined = CapturedException.groupingView(exceptionEvent: Self.events[Self.events.count - 2].1)
        #expect(inlined.frames.map(\.function) == ["Shop.inlinedHelper()"])
    }

    /// The culprit of a crash in async code names the function, not the piece of it where it resumed, and so
    /// does the key (FunctionName.swift: the normal form).
    @Test func anAsyncFunctionsResumptionIsShownAndKeyedAsTheFunction() {
        let name = "(1) suspend resume partial function for Shop.Engine.price(for: Swift.String) async -> Swift.Int"
        let event = Self.event(frames: [Self.frame("0x1100", kind: "pc", function: name)])
        let key = IssueKey(CapturedException.groupingView(exceptionEvent: event), custom: nil)
        #expect(key.culprit == "Shop.Engine.price(for: Swift.String) async -> Swift.Int")
        #expect(
            key.fingerprint == IssueKey.sha256("Fatal error\n? Shop.Engine.price(for: Swift.String) async -> Swift.Int")
        )
    }

    @Test func theFramesComeInCallerOrderNamedByTheirInnermostCalls() {
        // Innermost first, each frame named by its innermost inlined call (the culprit after inline expansion),
        // also one without a symbol of its own or with a file but no function.
        let view = CapturedException.groupingView(exceptionEvent: Self.events[1].1)
        #expect(
            view.frames.map(\.function) == [
                "Shop.secondInlined()", "Shop.inlinedIntoFileOnly()", "Shop.inlinedIntoOuter()",
            ])
        let async = CapturedException.groupingView(exceptionEvent: Self.events[2].1)
        #expect(async.frames.map(\.function) == ["Shop.crash()", "Shop.task()", "Shop.checkout()", "Executor.run()"])
        // The recorder's frame names no culprit; a frame its image's frames widened keys by offset and build id.
        let key = IssueKey(CapturedException.groupingView(exceptionEvent: Self.events[4].1), custom: nil)
        #expect(key.culprit == "? +0x8ffff" && key.rawBuildIds == [], "\(key)")
        #expect(key.subtitle == "declined" && key.title == "Fatal error")
    }
}
