import Foundation

/// The threads the read API runs on, at a lower CPU priority than ingestion: their nice value is raised by
/// `niceIncrement` (Linux keeps it per thread), so a long read — a 100,000-row page, every crash's reason looked
/// up — takes the CPU ingestion leaves. When the two compete for a core, ingestion keeps its pace and the read
/// takes longer; on an idle machine a read runs as fast as before. The connection's thread hands the read over,
/// waits for it and sends the answer itself, so nothing else about a request changes. Started on the first read
/// (most collectors in tests never serve one); two threads, so one read may symbolicate while another reads rows
/// (reads of a database file take turns on their connection anyway: `CollectorStore.reading`).
final class ReadThreads: @unchecked Sendable {
    /// Added to each read thread's nice value: 10 (its CPU weight is then about a tenth of a default thread's).
    static let niceIncrement: Int32 = 10

    private let count: Int
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var started = false
    private var stopped = false

    /// One read handed over, and whether it ran.
    private final class Job: @unchecked Sendable {
        let work: () -> Void
        var done = false
        init(_ work: @escaping () -> Void) { self.work = work }
    }

    /// `count` threads, started with the first read.
    init(count: Int = 2) { self.count = count }

    /// Whether `request` is one the read threads serve: a `GET` of the read API (`/api/…`).
    static func serves(_ request: HTTPRequest) -> Bool {
        request.method == "GET" && request.path.hasPrefix("/api/")
    }

    /// `body`'s answer, computed on a read thread (on the calling thread once stopped).
    func run<T>(_ body: () -> T) -> T {
        withoutActuallyEscaping(body) { body in
            var result: T?
            let job = Job { result = body() }
            condition.lock()
            guard !stopped else {
                condition.unlock()
                return body()
            }
            if !started {
                started = true
                for _ in 0..<count { Thread.detachNewThread { [self] in serve() } }
            }
            jobs.append(job)
            condition.broadcast()
            while !job.done { condition.wait() }
            condition.unlock()
            // Written on the read thread before `done` was set, under the same lock.
            return result ?? body()
        }
    }

    /// Lets the threads end once the reads handed over so far are done, and waits for those reads.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !jobs.isEmpty { condition.wait() }
        condition.unlock()
    }

    private func serve() {
        // PRIO_PROCESS with who = 0 is the calling thread on Linux; raising the nice value needs no privilege.
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let current = getpriority(which, 0)
        if errno == 0 { _ = setpriority(which, 0, min(19, current + Self.niceIncrement)) }
        condition.lock()
        while true {
            while jobs.isEmpty && !stopped { condition.wait() }
            guard !jobs.isEmpty else { break }
            let job = jobs.removeFirst()
            condition.unlock()
            job.work()
            condition.lock()
            job.done = true
            condition.broadcast()
        }
        condition.unlock()
    }
}
