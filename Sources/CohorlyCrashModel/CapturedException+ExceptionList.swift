/// What an event's exception list said, beside what the model decided from it: a crash read from an event keeps
/// each listed exception's `type`, `value` and `mechanism.type` as they arrived, so a reader of the model tells
/// a missing list from an empty one, a `cxx` mechanism from `cxx_exception` (both decided as a C++ exception) and
/// an absent type from an empty one, without the event's JSON.
extension CapturedException {
    /// One entry of an event's exception list, its members as sent (nil: absent; any JSON value, as the event
    /// gave it). An entry read whole (``sent`` not nil) also holds its whole `mechanism`, `module`, `thread_id`
    /// and stack, and renders back as it arrived (``sentValue``).
    public struct ListedException: Sendable, Equatable {
        /// `type`.
        public var type: CohorlyValue?
        /// `value`.
        public var value: CohorlyValue?
        /// `mechanism.type`.
        public var mechanismType: CohorlyValue?
        /// `mechanism`, every member (nil: absent, or the entry was not read whole).
        public var mechanism: CohorlyValue? = nil
        /// `module`.
        public var module: CohorlyValue? = nil
        /// `thread_id`.
        public var threadId: CohorlyValue? = nil
        /// `stacktrace`, frame for frame (nil: absent, or not an object: then it is in ``sent``).
        public var stack: ListedStack? = nil
        /// What the entry's rendering lacks to be the one that arrived; nil when it was not read whole (the
        /// model's JSON of a collector before it kept the list whole, or an event read from its bytes).
        public var sent: SentDifference? = nil

        /// An entry.
        public init(type: CohorlyValue?, value: CohorlyValue?, mechanismType: CohorlyValue?) {
            self.type = type
            self.value = value
            self.mechanismType = mechanismType
        }

        /// The `type`, `value` and `mechanism.type` of the entry `entry` of an event's list (all nil when it is
        /// not an object).
        init(entry: CohorlyValue) {
            self.init(type: entry["type"], value: entry["value"], mechanismType: entry["mechanism"]?["type"])
        }

        /// The entry `entry` read whole (``sent`` nil when it is not an object).
        init(whole entry: CohorlyValue) {
            self.init(entry: entry)
            guard let members = entry.objectValue else { return }
            mechanism = members["mechanism"]
            module = members["module"]
            threadId = members["thread_id"]
            stack = members["stacktrace"].flatMap(ListedStack.init(sent:))
            sent = SentDifference(rendered: renderedMembers, sent: members)
        }

        var renderedMembers: Properties {
            var members: Properties = [:]
            members["type"] = type
            members["value"] = self.value
            members["mechanism"] = mechanism
            members["module"] = module
            members["thread_id"] = threadId
            members["stacktrace"] = stack?.value
            return members
        }

        /// The entry as it arrived; nil when it was not read whole.
        public var sentValue: CohorlyValue? { sent.map { .object($0.applied(to: renderedMembers)) } }
    }

    /// Where the exceptions an event lists come from.
    public enum ExceptionList: Sendable, Equatable {
        /// The model's own rendering (``eventProperties``): an exception made on the device.
        case rendered
        /// The event it was read from had no exception list (or one that is not an array).
        case missing
        /// The list of the event it was read from, in its order (empty: an empty list).
        case listed([ListedException])
    }

    /// The first exception the event lists, as the list says it (nil: the list is missing or empty); for an
    /// exception made on the device, its rendering's (type cut to 255 characters, value to 10,000).
    public var firstListedException: ListedException? {
        switch exceptionList {
        case .rendered:
            return ListedException(
                type: .string(String(description.type.prefix(255))),
                value: .string(String(description.value.prefix(10_000))),
                mechanismType: .string(description.mechanism))
        case .missing: return nil
        case .listed(let list): return list.first
        }
    }

    /// The exception list of an event's properties as the model keeps it.
    public static func exceptionList(ofEvent properties: CohorlyValue) -> ExceptionList {
        guard let list = properties[exceptionListProperty]?.arrayValue else { return .missing }
        return .listed(list.map(ListedException.init(entry:)))
    }

    /// The list as it arrived, when every entry was read whole (``init(receivedEvent:)``); nil for the model's own
    /// rendering, a missing or empty list, or entries read in part.
    var sentExceptionList: CohorlyValue? {
        guard case .listed(let list) = exceptionList, !list.isEmpty else { return nil }
        var values: [CohorlyValue] = []
        values.reserveCapacity(list.count)
        for entry in list {
            guard let value = entry.sentValue else { return nil }
            values.append(value)
        }
        return .array(values)
    }

    /// The member of the model's JSON (``jsonValue``) holding a read event's list, and the one saying it had none.
    static let listJSONKey = "exception_list"
    static let missingListJSONKey = "exception_list_missing"

    /// The list's members of the model's JSON (none for ``ExceptionList/rendered``).
    var exceptionListJSON: Properties {
        switch exceptionList {
        case .rendered: return [:]
        case .missing: return [Self.missingListJSONKey: true]
        case .listed(let list):
            return [
                Self.listJSONKey: .array(
                    list.map { entry in
                        var members: Properties = [:]
                        members["type"] = entry.type
                        members["value"] = entry.value
                        members["mechanism_type"] = entry.mechanismType
                        if let sent = entry.sent {
                            members["mechanism"] = entry.mechanism
                            members["module"] = entry.module
                            members["thread_id"] = entry.threadId
                            members["stack"] = entry.stack.map(Self.json)
                            members["sent"] = sent.json
                        }
                        return .object(members)
                    })
            ]
        }
    }

    /// The list the model's JSON `value` holds (``ExceptionList/rendered`` when it holds none: an exception made
    /// on the device, or JSON written before the model kept the list).
    static func exceptionList(json value: CohorlyValue) -> ExceptionList {
        if let list = value[listJSONKey]?.arrayValue {
            return .listed(
                list.map { entry in
                    var listed = ListedException(
                        type: entry["type"], value: entry["value"], mechanismType: entry["mechanism_type"])
                    if let sent = entry["sent"] {
                        listed.mechanism = entry["mechanism"]
                        listed.module = entry["module"]
                        listed.threadId = entry["thread_id"]
                        listed.stack = entry["stack"].map(listedStack)
                        listed.sent = SentDifference(json: sent)
                    }
                    return listed
                })
        }
        return value[missingListJSONKey] == .bool(true) ? .missing : .rendered
    }
}
