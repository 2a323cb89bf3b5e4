/// How an object the model renders member for member differs from the one that arrived: what the model cannot
/// say of an event (a frame's `vars`, a mechanism's `help_link`, a breadcrumb without a `type`) kept beside the
/// model's fields, so the rendering gives back what was sent, member for member.
extension CapturedException {
    /// The members to put over the model's rendering of an object and the members to take out of it, to give
    /// back the object as it arrived (none of either: the rendering is the object).
    public struct SentDifference: Sendable, Equatable {
        /// The members that arrived and the rendering does not give back identically, as they arrived.
        public var kept: Properties
        /// The members the rendering has and the object did not, sorted.
        public var absent: [String]

        /// A difference (default: none).
        public init(kept: Properties = [:], absent: [String] = []) {
            self.kept = kept
            self.absent = absent
        }

        /// The difference between the rendering `rendered` and the object `sent`.
        public init(rendered: Properties, sent: Properties) {
            kept = sent.filter { rendered[$0.key] != $0.value }
            absent = rendered.keys.filter { sent[$0] == nil }.sorted()
        }

        /// Whether the rendering is the object.
        public var isEmpty: Bool { kept.isEmpty && absent.isEmpty }

        /// `rendered` made the object that arrived.
        public func applied(to rendered: Properties) -> Properties {
            var members = rendered
            for key in absent { members[key] = nil }
            members.merge(kept) { _, sent in sent }
            return members
        }

        /// As the model's JSON holds it: `{"kept": {…}, "absent": […]}`, each only when not empty.
        var json: CohorlyValue {
            var members: Properties = [:]
            if !kept.isEmpty { members["kept"] = .object(kept) }
            if !absent.isEmpty { members["absent"] = .array(absent.map(CohorlyValue.string)) }
            return .object(members)
        }

        /// The difference the model's JSON `value` holds (none when it holds nothing).
        init(json value: CohorlyValue?) {
            self.init(
                kept: value?["kept"]?.objectValue ?? [:],
                absent: (value?["absent"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
    }
}
