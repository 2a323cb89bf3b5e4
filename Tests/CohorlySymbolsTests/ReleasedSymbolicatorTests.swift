import Dispatch
import Foundation
import Synchronization
import Testing

@testable import CohorlySymbols

/// A symbolicator released right after a batch whose names are still being demangled on the background thread
/// (none read yet): the thread never reads a name after the mapped file it is in is gone.
@Suite struct ReleasedSymbolicatorTests {
    /// What the test and the background thread share (the hook runs on the background thread).
    final class Shared: @unchecked Sendable {
        /// The symbolicator, released on another thread.
        var symbolicator: ModuleSymbolicator?
        /// The mapped file the batch's names are in (nil once it is destroyed).
        weak var file: ElfFile?
        /// Signalled when the background thread is held before its first stretch.
        let held = DispatchSemaphore(value: 0)
        /// Signalled when the caller waits for the background task: the thread is let go.
        let letGo = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        /// Whether the thread has been held, and what it saw when let go: whether it was let go before the wait
        /// timed out, and whether the file was still there.
        let state = Mutex<(isHeld: Bool, wasLetGo: Bool, fileWasAlive: Bool?)>((false, false, nil))
    }

    @Test(.enabled(if: TextTable.hasSeveralCores && TextTable.demanglesInBackground.load(ordering: .relaxed)))
    func backgroundThreadReadsNoNameAfterTheFileIsGone() throws {
        // The toolchain's Swift runtime: thousands of Swift names in its symbol table, many stretches of them.
        let path = URL(fileURLWithPath: Fixtures.swiftc).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("lib/swift/linux/libswiftCore.so").path
        let shared = Shared()
        do {
            let symbolicator = try ModuleSymbolicator(debugFile: path)
            shared.file = symbolicator.symbols.file
            let starts = Array(symbolicator.symbols.addresses.prefix(2000))
            try #require(starts.count >= 4 * ModuleSymbolicator.backgroundBatchSize)
            symbolicator.text.testHook = { point in
                switch point {
                case .takingStretch:
                    let isFirst = shared.state.withLock { state in
                        defer { state.isHeld = true }
                        return !state.isHeld
                    }
                    guard isFirst else { return true }
                    shared.held.signal()
                    let wasLetGo = shared.letGo.wait(timeout: .now() + 30) == .success
                    let fileIsAlive = shared.file != nil
                    shared.state.withLock {
                        $0.wasLetGo = wasLetGo
                        $0.fileWasAlive = fileIsAlive
                    }
                    return fileIsAlive  // without the file, reading its names would fault: end instead
                case .waitingForTask:
                    if shared.state.withLock({ $0.isHeld }) { shared.letGo.signal() }
                    return true
                }
            }
            let batch = symbolicator.records(for: starts)
            #expect(batch.groups.count == starts.count)
            shared.symbolicator = symbolicator
        }
        // Every stretch of the batch is handed over and none taken: the thread waits before the first.
        try #require(shared.held.wait(timeout: .now() + 30) == .success)
        let releasing = Thread { [shared] in
            shared.symbolicator = nil
            shared.released.signal()
        }
        releasing.start()
        try #require(shared.released.wait(timeout: .now() + 30) == .success)
        let seen = shared.state.withLock { $0 }
        #expect(seen.wasLetGo)
        #expect(seen.fileWasAlive == true)
        #expect(shared.file == nil)  // released with the symbolicator
    }

    /// Names abandoned when the owner goes read as the mangled names they are made from; those already made
    /// (read before, or made by the background thread) stay readable, and nothing is left waiting.
    @Test func abandonedNamesReadAsTheirMangledNames() throws {
        let mangled = (0..<300).compactMap { strdup("$s4main\("Thing\($0)".utf8.count)Thing\($0)V3runyS2iF") }
        defer { mangled.forEach { free($0) } }
        let text = TextTable()
        text.defersDemangling = true
        text.startBackgroundTask()
        let numbers = mangled.map { text.add(demangling: $0) }
        text.closeBatch()
        text.defersDemangling = false
        let read = text.withView { view in String(decoding: view[numbers[299]], as: UTF8.self) }
        #expect(read == "main.Thing299.run(Swift.Int) -> Swift.Int")
        text.abandonBackgroundWork()
        for (index, number) in numbers.enumerated() {
            let name = text.string(number)
            #expect(name == "main.Thing\(index).run(Swift.Int) -> Swift.Int" || name == String(cString: mangled[index]))
        }
        #expect(text.string(numbers[299]) == read)
    }
}
