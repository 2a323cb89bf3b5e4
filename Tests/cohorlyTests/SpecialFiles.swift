import Foundation
import Synchronization

/// A real FIFO, a real Unix socket and a device, to give the CLI where it expects a regular file.
///
/// The FIFO has a writer thread that keeps opening and closing its write end: a command that (wrongly) opens
/// it for a blocking read is released at once and reads end-of-file, so the test fails on its output
/// instead of hanging, and ``fifoWasOpened`` tells that it did.
final class SpecialFiles: Sendable {
    let fifo: String
    let socket: String
    let device = "/dev/null"
    private let directory: String
    private let socketDescriptor: Int32
    private let writer = Mutex((stop: false, opens: 0))
    private let writerDone = DispatchSemaphore(value: 0)

    init(name: String) throws {
        directory = Scratch.path("special-\(name)")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        fifo = directory + "/pipe.json"
        socket = directory + "/socket.json"
        guard mkfifo(fifo, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        socketDescriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in socket.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        Thread.detachNewThread { [self] in
            while !writer.withLock({ $0.stop }) {
                let fd = open(fifo, O_WRONLY | O_CLOEXEC)  // returns once a reader has opened the FIFO
                guard fd >= 0 else { continue }
                writer.withLock { if !$0.stop { $0.opens += 1 } }
                close(fd)
            }
            writerDone.signal()
        }
    }

    /// Whether anything opened the FIFO for reading so far.
    var fifoWasOpened: Bool { writer.withLock { $0.opens > 0 } }

    /// Stops the writer (a reader held open lets its last open return) and removes the files.
    func remove() {
        writer.withLock { $0.stop = true }
        let reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        writerDone.wait()
        close(reader)
        close(socketDescriptor)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
