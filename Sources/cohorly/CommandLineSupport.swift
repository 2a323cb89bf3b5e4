import CohorlyCommandLine
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A subcommand: parses its own arguments (after its name) and prints its output.
protocol Command {
    /// The words that select the command, e.g. `["debug-files", "check"]`.
    static var words: [String] { get }
    /// One line for `cohorly --help`.
    static var summary: String { get }
    /// The usage block for `cohorly <command> --help`.
    static var help: String { get }
    /// Runs with the arguments that follow the command words.
    static func run(_ arguments: [String]) -> ExitStatus
}

/// A command declared by a ``CommandSpec``: its words, summary and help come from the declaration, and its
/// arguments are parsed by it.
protocol DeclaredCommand: Command {
    /// The command's words, positionals and option table.
    static var spec: CommandSpec { get }
}

extension DeclaredCommand {
    static var words: [String] { spec.words }
    static var summary: String { spec.summary }
    static var help: String { spec.help }
}

/// Work spread over the machine's cores.
enum Parallel {
    /// `transform` applied to every element, on up to as many threads as there are cores (items are dealt out
    /// in turn, so big and small ones mix), the results in the order of `items`.
    static func map<Item: Sendable, Result: Sendable>(
        _ items: [Item], _ transform: @Sendable (Item) -> Result
    ) -> [Result] {
        let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let threads = min(cores, max(1, items.count / 8))
        guard threads > 1 else { return items.map(transform) }
        let slots = Slots<Result>(count: items.count)
        defer { slots.release() }
        items.withUnsafeBufferPointer { buffer in
            let shared = SharedItems(buffer: buffer)
            DispatchQueue.concurrentPerform(iterations: threads) { part in
                for index in stride(from: part, to: shared.buffer.count, by: threads) {
                    slots.storage[index] = transform(shared.buffer[index])
                }
            }
        }
        return slots.storage.map { slot in
            guard let result = slot else { preconditionFailure("every slot is written before the threads end") }
            return result
        }
    }

    /// The result slots: each thread writes its own indices only, and they are read after all threads end.
    private final class Slots<Result>: @unchecked Sendable {
        let storage: UnsafeMutableBufferPointer<Result?>
        init(count: Int) {
            storage = .allocate(capacity: count)
            storage.initialize(repeating: nil)
        }
        func release() {
            _ = storage.deinitialize()
            storage.deallocate()
        }
    }

    /// The items, read (never written) by every thread.
    private struct SharedItems<Item: Sendable>: @unchecked Sendable {
        let buffer: UnsafeBufferPointer<Item>
    }
}

extension ParsedArguments {
    /// The last value given for option `name`, else the environment variable `variable` when it is set and not
    /// empty (`debug-files upload`'s vendor options: `--host`/`POSTHOG_CLI_HOST`, `--url`/`SENTRY_URL`, …).
    func value(_ name: String, orEnvironment variable: String) -> String? {
        options[name]?.last ?? ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }
}
