import CohorlyCrashModel
import Testing

/// The reader of an `$exception` event keeps what the model renders back (issue 40): a frame's `lang` that its
/// name and file do not tell (a C++ frame: its `_Z…` name is not sent, `FrameSymbol.language`), and every member
/// no field holds — the breadcrumbs and fingerprint as sent, the crash-time `$exception_…` facts — as the model's
/// properties, so the event read back renders them as they arrived.
@Suite struct ExceptionEventReadBackTests {
    static func crash(file: String?) -> CapturedException {
        var crash = CapturedException(
            description: CrashDescription(
                type: "std::bad_alloc", value: "", mechanism: "cxx_exception", issueName: nil, source: "cxx_exception"),
            facts: CrashReason.Facts(), level: "fatal", handled: false)
        let symbols = [
            FrameSymbol(
                function: "Shop::total()", rawFunction: "_ZN4Shop5totalEv", file: file, line: 7, column: 0,
                inlined: true),
            FrameSymbol(
                function: "Shop::pay()", rawFunction: "_ZN4Shop3payEv", file: file, line: 12, column: 3, inlined: false),
        ]
        crash.threads = [
            .init(
                tid: 1, name: "main", crashed: true,
                frames: [
                    .init(Frame(0x1234, kind: .pc), inApp: true, symbols: symbols),
                    .init(Frame(0x1000, kind: .returnAddress)),
                ])
        ]
        return crash
    }

    static func frames(_ properties: Properties) -> [CohorlyValue] {
        properties[CapturedException.exceptionListProperty]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue
            ?? []
    }

    @Test func aCxxFramesLanguageSurvivesReadingItsEvent() throws {
        for file in [nil, "shop.h", "shop.cpp"] {
            let sent = Self.crash(file: file).eventProperties
            #expect(
                Self.frames(sent).compactMap { $0["lang"]?.stringValue } == ["cpp", "cpp"],
                "\(String(describing: file))")
            let read = CapturedException(exceptionEvent: .object(sent))
            #expect(Self.frames(read.eventProperties) == Self.frames(sent), "\(String(describing: file))")
            // Kept through the model's JSON (what the collector stores).
            let stored = try #require(CapturedException(jsonValue: read.jsonValue))
            #expect(Self.frames(stored.eventProperties) == Self.frames(sent))
        }
    }

    @Test func aLanguageTheNameTellsIsNotKeptTwice() {
        var swift = Self.crash(file: "Shop.swift")
        swift.threads[0].frames[0].symbols = [
            FrameSymbol(
                function: "Shop.pay()", rawFunction: "$s4Shop3payyyF", file: "Shop.swift", line: 3, column: 1,
                inlined: false)
        ]
        let read = CapturedException(exceptionEvent: .object(swift.eventProperties))
        #expect(Self.frames(swift.eventProperties).compactMap { $0["lang"] } == ["swift"])
        #expect(read.threads.first?.frames.first?.symbols.first?.language == nil)
        #expect(Self.frames(read.eventProperties) == Self.frames(swift.eventProperties))
    }

    static let crumbs: CohorlyValue = [
        [
            "timestamp": "2026-12-01T10:00:00.500Z", "type": "http", "level": "warning", "category": "net",
            "message": "GET /pay", "data": ["status": 500],
        ]
    ]

    /// An event of another producer: crash-time facts and breadcrumbs in shapes of its own.
    static let event: CohorlyValue = [
        "distinct_id": "u", "$insert_id": "e1", "time": 1_764_990_000_000, "release": "shop@1",
        "$exception_level": "error", "$exception_pid": 4242, "$exception_fingerprint": ["checkout", "pay"],
        "$exception_hang_duration_ms": 3020, "$exception_breadcrumbs": crumbs, "$exception_breadcrumbs_dropped": 3,
        "$exception_list": [
            [
                "type": "Hang", "value": "main thread blocked", "mechanism": ["type": "hang", "handled": true],
                "stacktrace": ["type": "raw", "frames": [["instruction_addr": "0x1000", "in_app": true]]],
            ]
        ],
    ]

    @Test func crashTimeFactsAndBreadcrumbsAsSentAreKept() throws {
        let crash = CapturedException(exceptionEvent: Self.event)
        let rendered = crash.eventProperties
        for key in [
            "$exception_pid", "$exception_fingerprint", "$exception_hang_duration_ms", "$exception_breadcrumbs",
            "$exception_breadcrumbs_dropped",
        ] {
            #expect(rendered[key] == Self.event[key], "\(key)")
        }
        // The reader of the bytes keeps the same (containers whole).
        let streamed = try CohorlyValue.read(Array(Self.event.jsonString.utf8)) { reader throws(JSONReadError) in
            try CapturedException.readEvent(&reader)
        }
        #expect(streamed?.crash == crash)
        // The fields stay fields: none of their members is a property too.
        #expect(crash.properties.keys.filter { $0 == "$exception_list" || $0 == "$exception_level" }.isEmpty)
        #expect(crash.level == "error")
    }

    /// Breadcrumbs the model says exactly are read into it, each with its `level` and `type` as sent, and rendered
    /// back from it member for member (the crashing task's first, marked); through the model's JSON too.
    @Test func breadcrumbsAreReadIntoTheModelWithTheirLevelAndType() throws {
        let crash = CapturedException(exceptionEvent: Self.event)
        let crumb = try #require(crash.breadcrumbs.first)
        #expect(crash.breadcrumbs.count == 1)
        #expect(crumb.level == "warning")
        #expect(crumb.type == "http")
        #expect(crumb.category == "net")
        #expect(crumb.message == "GET /pay")
        #expect(crumb.data == ["status": 500])
        #expect(crumb.timestampMs == 1_796_119_200_500)
        #expect(crash.properties[CapturedException.breadcrumbsProperty] == nil)
        #expect(crash.eventProperties[CapturedException.breadcrumbsProperty] == Self.crumbs)
        let stored = try #require(CapturedException(jsonValue: crash.jsonValue))
        #expect(stored.breadcrumbs == crash.breadcrumbs)
        #expect(stored.eventProperties[CapturedException.breadcrumbsProperty] == Self.crumbs)

        var tasks = Self.event.objectValue ?? [:]
        let taskCrumbs: CohorlyValue = [
            [
                "timestamp": "2026-12-01T10:00:01.000Z", "type": "default", "level": "info", "category": "app",
                "message": "mine", "data": [:], "task": 7, "crashing_task": true,
            ],
            [
                "timestamp": "2026-12-01T10:00:00.000Z", "type": "default", "level": "error", "category": "app",
                "message": "other", "data": ["k": "v"], "task": 8,
            ],
        ]
        tasks[CapturedException.breadcrumbsProperty] = taskCrumbs
        tasks[CapturedException.taskProperty] = 7
        let withTasks = CapturedException(exceptionEvent: .object(tasks))
        #expect(withTasks.breadcrumbs.map(\.task) == [7, 8])
        #expect(withTasks.breadcrumbs.map(\.level) == [nil, "error"])
        #expect(withTasks.eventProperties[CapturedException.breadcrumbsProperty] == taskCrumbs)
    }

    /// A list of breadcrumbs whose entries the model cannot say exactly (a member it has no field for, one
    /// missing, a timestamp in another form) is read into it all the same, what differs kept beside each
    /// breadcrumb (``CapturedException/breadcrumbDifferences``), and rendered back as it arrived, through the
    /// model's JSON too; a list it cannot read (empty, a numeric timestamp) stays a property, as it arrived.
    @Test func breadcrumbsTheModelCannotSayAreKeptWithWhatDiffers() throws {
        let lists: [CohorlyValue] = [
            [
                [
                    "timestamp": "2026-12-01T10:00:00.500Z", "category": "net", "message": "GET", "data": [:],
                    "origin": "x",
                ]
            ],
            [
                [
                    "timestamp": "2026-12-01T10:00:00.500Z", "type": "http", "level": "info", "category": "net",
                    "data": [:],
                ]
            ],
            [
                [
                    "timestamp": "2026-12-01T10:00:00Z", "type": "http", "level": "info", "category": "net",
                    "message": "GET", "data": [:],
                ]
            ],
            [["timestamp": "2026-12-01T10:00:00.250Z", "level": "error"]],
        ]
        for list in lists {
            var event = Self.event.objectValue ?? [:]
            event[CapturedException.breadcrumbsProperty] = list
            let crash = CapturedException(exceptionEvent: .object(event))
            #expect(crash.breadcrumbs.count == 1, "\(list)")
            #expect(crash.breadcrumbDifferences?.count == 1, "\(list)")
            #expect(crash.properties[CapturedException.breadcrumbsProperty] == nil)
            #expect(crash.eventProperties[CapturedException.breadcrumbsProperty] == list)
            let stored = try #require(CapturedException(jsonValue: crash.jsonValue))
            #expect(stored.eventProperties[CapturedException.breadcrumbsProperty] == list)
        }
        let unread: [CohorlyValue] = [[], [["timestamp": 1_796_119_200.5, "category": "net"]], ["text"]]
        for list in unread {
            var event = Self.event.objectValue ?? [:]
            event[CapturedException.breadcrumbsProperty] = list
            let crash = CapturedException(exceptionEvent: .object(event))
            #expect(crash.breadcrumbs.isEmpty, "\(list)")
            #expect(crash.properties[CapturedException.breadcrumbsProperty] == list)
            #expect(crash.eventProperties[CapturedException.breadcrumbsProperty] == list)
        }
    }
}
