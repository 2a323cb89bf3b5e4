import CohorlyCrashModel
import Foundation
import Testing

/// An `$exception` event is read straight from its bytes (`CapturedException.readEvent`, no JSON tree of its
/// frames): the same crash, id and release as read from the parsed event, whatever its form and members.
@Suite struct ExceptionEventStreamingTests {
    /// The event read from the bytes and from their parsed tree (as `cohorly symbolicate` read it before); both
    /// must agree (nil: not an `$exception` event).
    static func expectSame(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let text = String(decoding: bytes, as: UTF8.self)
        let streamed = Result { () throws(JSONReadError) in
            try CohorlyValue.read(bytes) { reader throws(JSONReadError) in try CapturedException.readEvent(&reader) }
        }
        guard let tree = CohorlyValue(bytes: bytes) else {
            guard case .failure = streamed else {
                Issue.record("not JSON, but read: \(text)", sourceLocation: sourceLocation)
                return
            }
            return
        }
        let properties = tree["properties"] ?? tree
        let isEvent =
            properties["$exception_list"]?.arrayValue != nil
            && (tree["event"] == nil || tree["event"] == .string("$exception"))
        guard case .success(let streamed) = streamed else {
            Issue.record("valid JSON, but the reader failed: \(text)", sourceLocation: sourceLocation)
            return
        }
        guard let event = streamed else {
            #expect(!isEvent, "an $exception event not read: \(text)", sourceLocation: sourceLocation)
            return
        }
        #expect(isEvent, "read as an event: \(text)", sourceLocation: sourceLocation)
        #expect(event.crash == CapturedException(exceptionEvent: properties), "\(text)", sourceLocation: sourceLocation)
        #expect(
            event.id == (tree["uuid"] ?? tree["insert_id"] ?? properties["$insert_id"])?.stringValue,
            sourceLocation: sourceLocation)
        #expect(
            event.release == properties["release"]?.stringValue ?? properties["$app_version"]?.stringValue,
            sourceLocation: sourceLocation)
    }

    static func expectSame(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectSame(Array(text.utf8), sourceLocation: sourceLocation)
    }

    /// The `crashinput` corpus (its `seed-event*` files: a full event with threads, inlined and async frames and
    /// debug images, its bare properties, a list, a C++ one with members of the wrong types) reads the same.
    @Test func theCorpusEventsReadAsTheirTreesDo() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/fuzz/crashinput")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.filter { $0.hasPrefix("seed-event") }.count >= 4)
        for name in names {
            Self.expectSame(Array(try Data(contentsOf: directory.appendingPathComponent(name))))
        }
        let full = Array(try Data(contentsOf: directory.appendingPathComponent("seed-event.json")))
        let event = try #require(
            try CohorlyValue.read(full) { reader throws(JSONReadError) in
                try CapturedException.readEvent(&reader)
            })
        // What the seed holds, read: the crashed thread (listed again among the threads, kept once), another, and
        // a thread of no frames for the element that is not an object.
        #expect(event.crash.threads.map(\.tid) == [1, 2, nil])
        #expect(event.crash.threads[0].async != nil)
        #expect(event.crash.threads[0].logicalFrames.contains { $0.symbols.count == 2 })
        #expect(event.crash.images.count == 3)
        #expect(event.id == "u1" && event.release == "1.0")
        #expect(!event.crash.complete && event.crash.properties["nested"] != nil)
    }

    @Test func repeatedMembersAndWrongTypesReadAsTheTreeReadsThem() {
        let list = #""$exception_list":[{"type":"T","stacktrace":{"frames":[{"instruction_addr":"0x10"}]}}]"#
        let cases = [
            // The properties twice (the last wins), not an object, or the event not an $exception.
            #"{"event":"$exception","properties":{\#(list)},"properties":"x"}"#,
            #"{"event":"$exception","properties":"x","properties":{\#(list)}}"#,
            #"{"event":"$pageview","properties":{\#(list)}}"#, #"{"event":["$exception"],\#(list)}"#,
            #"{\#(list),"event":"$exception","uuid":["u"],"insert_id":"i","$insert_id":"j","release":7}"#,
            // The list twice, not an array, empty; its first element not an object; stack traces of every type.
            #"{\#(list),"$exception_list":{"a":1}}"#, #"{"$exception_list":{"a":1},\#(list)}"#,
            #"{"$exception_list":[]}"#, #"{"$exception_list":[1,{"type":"T"}]}"#,
            #"{"$exception_list":[{"stacktrace":{"frames":[1,"x",[2],{"instruction_addr":"0x1","inline":true}],"#
                + #""frames":[{"instruction_addr":"0x20","lineno":-1,"colno":1e3,"function":["f"]}],"async_stop":1}"#
                + #","stacktrace":[1]}],"$exception_threads":[{"crashed":"yes","stacktrace":"s"},null,"#
                + #"{"thread_id":1.0,"name":{"n":1},"stacktrace":{"frames":[{"instruction_addr":"0x30"}]}}],"#
                + #""$debug_images":[{"code_file":"/a","image_addr":"0x0","image_size":-5,"arch":["x"]},null]}"#,
            #"{"$exception_list":[{"mechanism":{"type":"swift_fatal","meta":{"signal":{"number":"11"}}}}],"#
                + #""$exception_threads":"x","$debug_images":{"a":1},"$exception_level":["f"],"time":1.5,"#
                + #""$exception_report_complete":false,"$exception_extra":{"deep":[[1]]},"kept":{"deep":[[1]]}}"#,
            "[]", "1", "null", "{}", #"{"properties":{}}"#,
        ]
        for text in cases { Self.expectSame(text) }
    }
}
