import CohorlyCrash
import CrashDemoSupport
import Foundation

/// Every way CrashDemo can crash. The raw value is the word on the command line.
enum CrashKind: String, CaseIterable {
    case forceUnwrap = "force-unwrap"
    case fatalError = "fatal-error"
    case indexOutOfRange = "index-out-of-range"
    case integerOverflow = "integer-overflow"
    case divisionByZero = "division-by-zero"
    case precondition
    case nullWrite = "null-write"
    case stackOverflow = "stack-overflow"
    case abort
    case cxxException = "cxx-exception"
    case badCast = "bad-cast"
    case sigbus
    case sigfpe
    case sigtrap
    case asyncActor = "async-actor"
    case asyncSleep = "async-sleep"
    case asyncTaskGroup = "async-task-group"
    case asyncTaskLocal = "async-task-local"
    case asyncCancellationHandler = "async-cancellation-handler"
    case asyncGroupChild = "async-group-child"
    case asyncContinuation = "async-continuation"
    case asyncLet = "async-let"

    /// One line for `CrashDemo list`.
    var summary: String {
        switch self {
        case .forceUnwrap: "force-unwrap nil (SIGILL)"
        case .fatalError: "fatalError with non-ASCII and control characters (SIGILL)"
        case .indexOutOfRange: "array index out of range (SIGILL)"
        case .integerOverflow: "integer overflow (SIGILL)"
        case .divisionByZero: "Swift integer division by zero (SIGILL)"
        case .precondition: "precondition failure (SIGILL)"
        case .nullWrite: "write through a null pointer (SIGSEGV)"
        case .stackOverflow: "unbounded recursion (SIGSEGV)"
        case .abort: "abort() (SIGABRT)"
        case .cxxException: "uncaught C++ std::runtime_error (SIGABRT)"
        case .badCast: "failed as! cast (SIGABRT)"
        case .sigbus: "access past the end of a truncated mmap'd file (SIGBUS)"
        case .sigfpe: "C integer division by zero (SIGFPE)"
        case .sigtrap: "raise(SIGTRAP)"
        case .asyncActor: "force-unwrap nil in an actor method awaited by a request handler (SIGILL, on a task)"
        case .asyncSleep: "force-unwrap nil after a Task.sleep resumes, three awaits deep (SIGILL, on a task)"
        case .asyncTaskGroup: "force-unwrap nil in a task-group child (SIGILL, on a task)"
        case .asyncTaskLocal:
            "force-unwrap nil after a Task.sleep, awaited through TaskLocal.withValue (SIGILL, on a task)"
        case .asyncCancellationHandler:
            "force-unwrap nil after a Task.sleep, awaited through withTaskCancellationHandler (SIGILL, on a task)"
        case .asyncGroupChild: "force-unwrap nil after a Task.sleep, two awaits deep in a task-group child (SIGILL)"
        case .asyncContinuation:
            "force-unwrap nil after a continuation resumed from another thread and a Task.sleep (SIGILL, on a task)"
        case .asyncLet: "force-unwrap nil after a Task.sleep, two awaits deep in an async let (SIGILL, on a task)"
        }
    }

    /// The text of `fatalError` in the `fatal-error` kind.
    static let fatalMessage = "demo fatal ✓ ünïcödé \u{1}bell\u{7}tab\t end"

    /// Crashes the calling thread this way.
    func crash(scratchDirectory: String) -> Never {
        switch self {
        case .forceUnwrap: crashForceUnwrap()
        case .fatalError: crashFatalError()
        case .indexOutOfRange: crashIndexOutOfRange()
        case .integerOverflow: crashIntegerOverflow()
        case .divisionByZero: crashDivisionByZero()
        case .precondition: crashPrecondition()
        case .nullWrite: demo_null_write()
        case .stackOverflow: _ = recurseForever(0)
        case .abort: demo_abort()
        case .cxxException: demo_cxx_throw("demo C++ failure")
        case .badCast: crashBadCast()
        case .sigbus: demo_sigbus(scratchDirectory)
        case .sigfpe: _ = demo_sigfpe(Int32(CommandLine.arguments.count - CommandLine.arguments.count))
        case .sigtrap: demo_sigtrap()
        case .asyncActor, .asyncSleep, .asyncTaskGroup: AsyncCrash.run(self)
        case .asyncTaskLocal, .asyncCancellationHandler, .asyncGroupChild, .asyncContinuation, .asyncLet:
            AsyncRuntimeCrash.run(self)
        }
        Foundation.exit(97)  // not reached when the crash works
    }
}

/// Values the optimizer cannot see through (they pass through a C optimization barrier).
var opaqueOptional: Int? { demo_identity(0) == 0 ? nil : 1 }
var opaqueNumbers: [Int] { [1, 2, demo_identity(3)] }
var opaqueIndex: Int { demo_identity(7) }
var opaqueLarge: Int { demo_identity(Int.max - 1) }
var opaqueZero: Int { demo_identity(0) }
var opaqueAny: Any { ([42, "text"] as [Any])[demo_identity(0)] }
var opaqueStop: Int { demo_identity(-1) }
/// Each crash function records its name first: distinct code, so the optimizer cannot merge them.
nonisolated(unsafe) var lastCrashFunction: StaticString = ""

@inline(never) func crashForceUnwrap() {
    lastCrashFunction = "crashForceUnwrap"
    let value = opaqueOptional!
    print(value)
}

@inline(never) func crashFatalError() {
    lastCrashFunction = "crashFatalError"
    if opaqueZero == 0 { fatalError(CrashKind.fatalMessage) }
    print(opaqueZero)
}

@inline(never) func crashIndexOutOfRange() {
    lastCrashFunction = "crashIndexOutOfRange"
    let value = opaqueNumbers[opaqueIndex]
    print(value)
}

@inline(never) func crashIntegerOverflow() {
    lastCrashFunction = "crashIntegerOverflow"
    let value = opaqueLarge + opaqueIndex
    print(value)
}

@inline(never) func crashDivisionByZero() {
    lastCrashFunction = "crashDivisionByZero"
    let value = opaqueIndex / opaqueZero
    print(value)
}

@inline(never) func crashPrecondition() {
    lastCrashFunction = "crashPrecondition"
    precondition(opaqueZero != 0, "demo precondition")
    print(opaqueZero)
}

@inline(never) func crashBadCast() {
    lastCrashFunction = "crashBadCast"
    let value = opaqueAny as! String
    print(value)
}

@inline(never) func recurseForever(_ depth: Int) -> Int {
    if depth == opaqueStop { return depth }
    var frame = (depth, depth, depth, depth, depth, depth, depth, depth)
    demo_opaque(&frame)
    return recurseForever(depth + 1) + frame.0
}
