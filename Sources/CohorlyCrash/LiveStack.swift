import CCrashRecorder
import Foundation

/// The calling thread's stack and the loaded modules, taken while the process runs (cly_capture.c): the crash
/// path's unwinder, used from ordinary code.
enum LiveStack {
    /// Why stacks cannot be taken (libunwind could not be loaded), or nil once the unwinder is ready. The first
    /// use loads it — at most once per process, and not at all when `CohorlyCrash.install` already did.
    static let unavailableReason: String? = {
        var message = [CChar](repeating: 0, count: 512)
        guard cly_capture_prepare(&message, message.count) != 0 else { return nil }
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// The path of this process's executable.
    static let executablePath: String =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first
        ?? ""

    /// The stack of the calling thread, innermost first, all return addresses (it captured itself by a call), and
    /// its async callers when it runs async code (the anchor indexes the returned frames). This function's frame
    /// and the `skip` frames above it (the caller's own wrappers, each `@inline(never)`) are left out: with `skip`
    /// 1, called from a public entry point, frame 0 is the return address into the app's code that called it.
    /// Empty when the unwinder is unavailable.
    @inline(never)
    static func capture(skip: Int) -> (frames: [Frame], truncated: Bool, async: AsyncChain?) {
        guard unavailableReason == nil else { return ([], false, nil) }
        let capacity = Int(CLY_MAX_FRAMES)
        let buffer = UnsafeMutablePointer<UInt>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var truncated = false
        var chain = cly_async_chain()
        // The C function drops its own frame; 1 more for this one, then the caller's `skip`.
        let count = Int(
            cly_capture_current_stack_async(buffer, Int32(capacity), Int32(clamping: 1 + skip), &truncated, &chain))
        let frames = (0..<max(0, min(count, capacity))).map { Frame(UInt64(buffer[$0]), kind: .returnAddress) }
        return (frames, truncated, AsyncChain(recorded: chain, physicalCount: frames.count))
    }

    /// The calling thread's id and name (as `/proc/self/task/<tid>/comm` shows it).
    static func currentThread() -> (tid: Int32, name: String) {
        var name = [CChar](repeating: 0, count: 16)
        cly_capture_thread_name(&name)
        return (
            cly_capture_thread_id(),
            String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        )
    }

    /// Changes whenever a library is loaded or unloaded: ``modules()`` stays valid until it does.
    static var modulesGeneration: UInt64 { cly_capture_modules_generation() }

    /// Every loaded ELF object (path, base, size, build id), in the loader's order (the executable first).
    static func modules() -> [CrashReport.Module] {
        final class Collected {
            var modules: [CrashReport.Module] = []
        }
        let collected = Collected()
        withExtendedLifetime(collected) {
            cly_capture_list_modules(
                { module, context in
                    guard let module, let context, let path = module.pointee.path else { return }
                    let entry = module.pointee
                    guard entry.size > 0 else { return }
                    let length = max(0, min(Int(entry.build_id_length), 32))
                    let buildId = withUnsafeBytes(of: entry.build_id) { bytes in
                        bytes.prefix(length).map { byte in
                            String(byte >> 4, radix: 16) + String(byte & 0xf, radix: 16)
                        }.joined()
                    }
                    Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue().modules.append(
                        CrashReport.Module(
                            path: String(cString: path), base: Address(UInt64(entry.base)),
                            size: Address(UInt64(entry.size)), buildId: buildId))
                }, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.modules
    }
}
