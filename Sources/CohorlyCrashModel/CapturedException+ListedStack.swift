/// The stacks an event listed, held as the model's frames: each listed exception's `stacktrace` and each of
/// `$exception_threads`, frame for frame in the order they arrived (oldest first, inlined calls as their own
/// frames), each frame the model's ``StackFrame`` (its address, kind, in-app flag and the symbol its sender
/// resolved) with what the model has no field for (`module`, `image_addr`, `vars`, `pre_context`…) beside it, so
/// the event renders back as it arrived.
extension CapturedException {
    /// One frame of a listed stack.
    public struct ListedFrame: Sendable, Equatable {
        /// The frame (nil: it had no readable `instruction_addr`); its one symbol the one its sender resolved.
        public var frame: StackFrame?
        /// Whether it arrived with its kind (``frameKindKey``); without, ``frame`` holds a return address.
        public var kindSent: Bool
        /// Whether it is an inlined call (`inline: true`) of the frame after it.
        public var inlined: Bool
        /// What the frame's rendering lacks to be the frame that arrived.
        public var sent: SentDifference

        /// A frame.
        public init(frame: StackFrame?, kindSent: Bool, inlined: Bool, sent: SentDifference = SentDifference()) {
            self.frame = frame
            self.kindSent = kindSent
            self.inlined = inlined
            self.sent = sent
        }

        /// The frame `value` as it arrived (its members as a frame of an `$exception` stacktrace).
        package init(sent value: CohorlyValue) {
            let wire = ExceptionEventFields.WireFrame(value)
            let frame = wire.pc.map { pc in
                StackFrame(
                    Frame(pc, kind: wire.kind ?? .returnAddress), inApp: wire.inApp,
                    symbols: wire.symbol.map { [$0] } ?? [])
            }
            self.init(frame: frame, kindSent: wire.kind != nil, inlined: wire.inlined)
            sent = SentDifference(rendered: renderedMembers, sent: value.objectValue ?? [:])
        }

        /// The frame as the model renders it, before ``sent``: its `instruction_addr`, kind, `in_app`, `inline`
        /// and what its symbol says (`function` short with the full name as ``rawFunctionKey``, `symbol`,
        /// `filename`, `lineno`, `colno`, `lang`).
        var renderedMembers: Properties {
            var value: Properties = [:]
            if inlined { value["inline"] = true }
            guard let frame else { return value }
            value["instruction_addr"] = .string(frame.frame.address.description)
            if kindSent { value[CapturedException.frameKindKey] = .string(frame.frame.kind.wireName) }
            value["in_app"] = .bool(frame.inApp)
            guard let symbol = frame.symbols.first else { return value }
            if let function = symbol.function {
                let short = symbol.shortFunction ?? function
                value["function"] = .string(short)
                if short != function { value[CapturedException.rawFunctionKey] = .string(function) }
            }
            if let raw = symbol.rawFunction { value["symbol"] = .string(raw) }
            if let file = symbol.file {
                value["filename"] = .string(file)
                value["lineno"] = .int(symbol.line)
                if symbol.column > 0 { value["colno"] = .int(symbol.column) }
            }
            if let language = symbol.language { value["lang"] = .string(language) }
            return value
        }

        /// The frame as it arrived.
        public var value: CohorlyValue { .object(sent.applied(to: renderedMembers)) }
    }

    /// One listed `stacktrace`: its frames and its other members (`type`, ``asyncStopKey``, `registers`…).
    public struct ListedStack: Sendable, Equatable {
        /// The frames, oldest first, as they arrived.
        public var frames: [ListedFrame]
        /// What the stack's rendering (its `frames`) lacks to be the one that arrived.
        public var sent: SentDifference

        /// A stack.
        public init(frames: [ListedFrame], sent: SentDifference = SentDifference()) {
            self.frames = frames
            self.sent = sent
        }

        /// The stacktrace `value` as it arrived; nil when it is not an object.
        init?(sent value: CohorlyValue) {
            guard let members = value.objectValue else { return nil }
            self.init(frames: (value["frames"]?.arrayValue ?? []).map(ListedFrame.init(sent:)))
            sent = SentDifference(rendered: renderedMembers, sent: members)
        }

        var renderedMembers: Properties { ["frames": .array(frames.map(\.value))] }

        /// The stacktrace as it arrived.
        public var value: CohorlyValue { .object(sent.applied(to: renderedMembers)) }
    }

    /// One entry of an event's `$exception_threads`, as it arrived: its id, name and stack, and its other members
    /// (`crashed`, ``Thread/catchSite``'s `catch_site`…).
    public struct ListedThread: Sendable, Equatable {
        /// `thread_id` (nil: absent).
        public var threadId: CohorlyValue?
        /// `name` (nil: absent).
        public var name: CohorlyValue?
        /// `stacktrace` (nil: absent, or not an object: then it is in ``sent``).
        public var stack: ListedStack?
        /// What the entry's rendering lacks to be the one that arrived.
        public var sent: SentDifference

        /// An entry.
        public init(threadId: CohorlyValue?, name: CohorlyValue?, stack: ListedStack?, sent: SentDifference) {
            self.threadId = threadId
            self.name = name
            self.stack = stack
            self.sent = sent
        }

        /// The entry `value`; nil when it is not an object.
        package init?(sent value: CohorlyValue) {
            guard let members = value.objectValue else { return nil }
            self.init(
                threadId: members["thread_id"], name: members["name"],
                stack: members["stacktrace"].flatMap(ListedStack.init(sent:)), sent: SentDifference())
            sent = SentDifference(rendered: renderedMembers, sent: members)
        }

        var renderedMembers: Properties {
            var members: Properties = [:]
            members["thread_id"] = threadId
            members["name"] = name
            members["stacktrace"] = stack?.value
            return members
        }

        /// The entry as it arrived.
        public var value: CohorlyValue { .object(sent.applied(to: renderedMembers)) }

        /// The entries of `value` (an event's `$exception_threads`); nil when it is not an array of objects.
        static func list(_ value: CohorlyValue?) -> [ListedThread]? {
            guard let list = value?.arrayValue else { return nil }
            var threads: [ListedThread] = []
            threads.reserveCapacity(list.count)
            for entry in list {
                guard let thread = ListedThread(sent: entry) else { return nil }
                threads.append(thread)
            }
            return threads
        }
    }
}
