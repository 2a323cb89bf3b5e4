import CCrashRecorder
import Cohorly
import Foundation

extension CohorlyCrash {
    /// Runs `operation` with `tags` (a request id, a route…) as its task's context: a crash in this task or in a
    /// child task it starts (`async let`, a task group; a `Task {}` made inside copies it too) carries them as
    /// event properties (`request_id`…), and so does an error captured there (`captureError`). Nested calls add
    /// to the outer tags (an inner value wins). The tags are serialized once here, so the crash handler copies
    /// them without allocating: at most 1 KiB of JSON (`CLY_MAX_TASK_CONTEXT`); beyond it the crash carries none
    /// of them (captured errors still do).
    /// - Parameters:
    ///   - tags: the context; keys starting with `$` are the SDK's and are left out.
    ///   - operation: the work done in that context.
    public static func withContext<Result>(
        _ tags: [String: String], isolation: isolated (any Actor)? = #isolation,
        operation: () async throws -> Result
    ) async rethrows -> Result {
        try await TaskContext.$current.withValue(TaskContext.adding(tags), operation: operation, isolation: isolation)
    }

    /// ``withContext(_:isolation:operation:)`` for synchronous work.
    public static func withContext<Result>(_ tags: [String: String], operation: () throws -> Result) rethrows
        -> Result
    {
        try TaskContext.$current.withValue(TaskContext.adding(tags), operation: operation)
    }

    /// The context of the calling task (``withContext(_:isolation:operation:)``), empty outside one.
    public static var currentContext: [String: String] { TaskContext.current?.tags ?? [:] }
}

/// One task context: the tags, and the same tags serialized for the crash handler (cly_tasks.c), which reaches
/// them from the crashed thread's task through the `TaskLocal` below — so ``snapshot`` must stay this class's
/// first stored property.
final class TaskContext: Sendable {
    /// The address of the tags as the crash handler copies them (`cly_task_context *`, immutable until deinit; 0
    /// when their JSON exceeds `CLY_MAX_TASK_CONTEXT`).
    private let snapshot: UInt
    let tags: [String: String]

    /// The context of the running task.
    @TaskLocal static var current: TaskContext?

    /// Tells the recorder where the context lives (once per process).
    private static let registered: Void = {
        cly_task_context_set_key(Unmanaged.passUnretained(TaskContext.$current).toOpaque())
    }()

    init(tags: [String: String]) {
        self.tags = tags
        let json = Array(CohorlyValue.object(tags.mapValues(CohorlyValue.string)).jsonString.utf8)
        let made = json.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { cly_task_context_make($0.baseAddress, $0.count) }
        }
        snapshot = UInt(bitPattern: made.map { Int(bitPattern: UnsafeRawPointer($0)) } ?? 0)
    }

    deinit { cly_task_context_free(OpaquePointer(bitPattern: snapshot)) }

    /// The running task's tags with `tags` added (`$` keys left out).
    static func adding(_ tags: [String: String]) -> TaskContext {
        _ = registered
        var merged = current?.tags ?? [:]
        for (key, value) in tags where !key.hasPrefix("$") { merged[key] = value }
        return TaskContext(tags: merged)
    }

    /// The running task's id and context as event properties (``CapturedException/taskProperties(task:context:into:)``).
    static func addCurrent(to properties: inout Properties) {
        let task = cly_task_current_id()
        CapturedException.taskProperties(
            task: task == 0 ? nil : task, context: current?.tags.mapValues(CohorlyValue.string), into: &properties)
    }
}
