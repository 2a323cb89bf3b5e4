import CohorlyCrashModel
import CohorlyCollectorAPI

/// Issues: the collector's `$exception` events grouped the way PostHog's error tracking groups them (the
/// exception type and the in-app frames, a caller-supplied fingerprint first; see IssueKey.swift), each group
/// with its counts, releases and state (docs/issues.md).

/// Where an issue stands. `open` → `resolved` (now, or in a release) → `regressed` when it recurs in a later
/// release (or, resolved without a release, when it recurs at all); `muted` until a date or for N more
/// occurrences, then `open` again. `reopen` makes any of them `open`.
public enum IssueState: String, Sendable, Hashable, CaseIterable {
    /// New, or reopened, or its mute ended.
    case open
    /// Marked fixed (now, or in ``IssueSummary/resolvedInRelease``).
    case resolved
    /// Resolved, then seen again in a later release.
    case regressed
    /// Silenced until a date or for a number of occurrences.
    case muted
}

/// One issue as the list and the page show it.
public struct IssueSummary: Sendable, Hashable {
    /// Stable row id: the CLI's and the page's ID.
    public var id: Int64
    /// What its occurrences share: the caller's fingerprint as sent (a SHA-256 over 64 characters), else the
    /// SHA-256 (hex) of the exception type and the in-app frames.
    public var fingerprint: String
    /// The exception type (`SIGSEGV`, `Fatal error`, `Swift runtime failure: Index out of range`, `Hang`).
    public var title: String
    /// The value (the crash reason's details) unless the title already ends with it, else the ``culprit``.
    public var subtitle: String
    /// The top in-app frame of its first occurrence (the crash recorder's own `cly_…` frames skipped): the
    /// function (`Shop.pay()`), else `module +0x<offset>`; empty when the stack had no in-app frame.
    public var culprit: String
    /// `$exception_level`: `fatal`, `error`, `warning`…
    public var level: String
    /// The mechanism type: `signal`, `swift_fatal`, `cxx_exception`, `handled`, `hang`, `abnormal_exit`…
    public var mechanism: String
    /// Its state.
    public var state: IssueState
    /// The release it was resolved in (nil: resolved "now", or not resolved).
    public var resolvedInRelease: String?
    /// A mute's end, unix seconds (nil: none).
    public var mutedUntil: Int64?
    /// Occurrences left before a mute ends (nil: none).
    public var mutedForOccurrences: Int?
    /// The first and the last occurrence's crash time (not arrival), unix seconds.
    public var firstSeen: Int64
    /// See ``firstSeen``.
    public var lastSeen: Int64
    /// How many occurrences it has.
    public var occurrences: Int
    /// How many distinct `distinct_id`s its occurrences have.
    public var users: Int
    /// The release of its first occurrence (by crash time), when it had one.
    public var firstRelease: String?
    /// The release of its latest occurrence, when it had one.
    public var lastRelease: String?
    /// The ``StoredEvent/id`` of its latest occurrence (by crash time).
    public var latestEventId: Int64
    /// The app its occurrences came from (the project its wire was addressed to, else `$app_name`); empty when none.
    public var app: String = ""
    /// Its short id, numbered in its app (`MYAPP-12`; IssueApp.swift).
    public var shortId: String = ""
}

extension IssueSummary {
    /// The culprit as the stack prints it (``FunctionName/short(demangled:)``: `startService(_:)`, not a full
    /// signature an earlier key or another SDK's frame kept): what the pages, the API's `culprit_display` and the
    /// CLI show. ``culprit`` stays as keyed.
    public var displayCulprit: String { FunctionName.short(demangled: culprit) }

    /// The subtitle as shown: the short culprit when the subtitle is the culprit.
    public var displaySubtitle: String { subtitle == culprit ? displayCulprit : subtitle }
}

/// Which issues a list shows; nil fields match every issue.
public struct IssueFilter: Sendable, Hashable {
    /// Only issues in this state.
    public var state: IssueState?
    /// Only issues of this level.
    public var level: String?
    /// Only issues with an occurrence from a release this names: the release, a bare version of it (`1.2.0` for
    /// `MyApp@1.2.0`), or a prefix up to a separator (`MyApp`, `1.2`).
    public var release: String?
    /// Only issues seen at or after this time (unix seconds).
    public var since: Int64?
    /// Only issues of this app.
    public var app: String?
    /// Only issues this search finds (docs/issues.md, "Search").
    package var search = IssueSearch()

    /// A filter (default: every issue).
    public init(
        state: IssueState? = nil, level: String? = nil, release: String? = nil, since: Int64? = nil, app: String? = nil
    ) {
        self.state = state
        self.level = level
        self.release = release
        self.since = since
        self.app = app
    }
}

/// The order of a list (each descending, ties by id, newest first).
public enum IssueSort: String, Sendable, Hashable, CaseIterable {
    /// Last seen first (the default).
    case lastSeen = "last-seen"
    /// Most occurrences first.
    case occurrences
    /// Most distinct users first.
    case users
}

/// One change of an issue's state, as stored.
public struct IssueTransition: Sendable, Hashable {
    /// The state before.
    public var from: IssueState
    /// The state after.
    public var to: IssueState
    /// When, unix seconds (an action's time, or the arrival of the occurrence that caused it).
    public var time: Int64
    /// The release it concerns: the one resolved in, or the occurrence's that regressed it.
    public var release: String?
    /// Why, in a few words (`resolved in release 1.2.0`, `occurrence 42 from release 1.3.0`…).
    public var note: String?
}

/// What an issue action can fail with (the HTTP API answers 404 / 400 with its description).
public enum IssueError: Error, Equatable, CustomStringConvertible {
    /// No issue has this id.
    case unknownIssue(Int64)
    /// The action's arguments do not fit (a mute with neither a date nor a count, a count below 1…).
    case invalid(String)

    /// The reason, for a person.
    public var description: String {
        switch self {
        case .unknownIssue(let id): return "no issue with id \(id)"
        case .invalid(let reason): return reason
        }
    }
}
