// Capturing the other threads at crash time.
//
// Order of events (all inside the crash handler of the crashed thread):
//   1. install the dump handler for SIGSYS (sigaction: async-signal-safe). SIGSYS, not a real-time signal:
//      libdispatch and the Swift concurrency pool block every signal except the synchronous ones and SIGSYS,
//      so a real-time signal would never reach their threads (docs/internals.md, the crash path);
//   2. list /proc/self/task with raw getdents64 (opendir/readdir allocate) and fill one slot per thread:
//      tid and name (/proc/self/task/<tid>/comm, read with open/read/close);
//   3. skip a thread whose /proc status shows SIGSYS blocked (it would never answer), `tgkill` the others;
//   4. each signalled thread, in `dump_handler`, reads its dispatch queue's label (cly_dispatch_queue.c) and
//      unwinds its own interrupted context into its slot, counts
//      itself in (atomic + futex wake), then parks on the release futex (bounded);
//   5. the crashed thread waits on the answer counter, at most CLY_THREAD_WAIT_MS in total;
//   6. the parked threads are never let go: they stay parked until the process dies of the crash (no app code
//      runs after a crash; a last-resort deadline in the park ends the process should it somehow live on).
// A thread whose own unwind faults is sent back (siglongjmp) to its dump handler by the crash handler and
// answers with the frames it had. The dump handler stays installed afterwards: a late SIGSYS must not kill
// the process with a different signal than the one it crashed of.
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <string.h>

#include "cly_internal.h"
#include "cly_writer.h"

#define DUMP_SIGNAL SIGSYS
#define PARK_POLL_NS 100000000ull

static cly_thread *slots;
static int slot_count;
static atomic_int answered_count;
static atomic_int parking;       // a crash is being handled: our SIGSYS parks the thread it reaches, for good
static atomic_int capture_open;  // …and a thread with a slot records its stack first
static atomic_int never_woken;   // the futex word the parked threads sleep on
static _Atomic uint64_t park_deadline_ns;  // monotonic: past it, a parked thread ends the process itself
static atomic_int dumping_tid[CLY_MAX_THREADS];
static sigjmp_buf dump_jumps[CLY_MAX_THREADS];

void cly_futex_wait(atomic_int *word, int expected, uint64_t timeout_ns) {
    struct timespec timeout = {(time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull)};
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, expected, &timeout, NULL, 0);
}

void cly_futex_wake(atomic_int *word) { syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0); }

/// "/proc/self/task/<tid>/<leaf>" into `out`.
static void task_path(pid_t tid, const char *leaf, char *out) {
    static const char prefix[] = "/proc/self/task/";
    size_t n = sizeof prefix - 1;
    memcpy(out, prefix, n);
    n += cly_format_uint((uint64_t)tid, out + n);
    out[n++] = '/';
    size_t leaf_length = strlen(leaf);
    memcpy(out + n, leaf, leaf_length + 1);
}

/// Reads up to `size - 1` bytes of a small /proc file (open/read/close: async-signal-safe).
static ssize_t read_small_file(const char *path, char *out, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t total = 0;
    while ((size_t)total + 1 < size) {
        ssize_t n = read(fd, out + total, size - 1 - (size_t)total);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        total += n;
    }
    close(fd);
    out[total] = 0;
    return total;
}

void cly_thread_read_name(pid_t tid, char *name, size_t size) {
    char path[64];
    task_path(tid, "comm", path);
    ssize_t n = read_small_file(path, name, size);
    if (n <= 0) {
        name[0] = 0;
        return;
    }
    if (name[n - 1] == '\n') name[n - 1] = 0;
}

bool cly_thread_blocks_signal(pid_t tid, int signal_number) {
    char path[64];
    char status[4096];
    task_path(tid, "status", path);
    if (read_small_file(path, status, sizeof status) <= 0) return false;
    const char *line = strstr(status, "\nSigBlk:");  // strstr: pure function on our buffer
    if (line == NULL) return false;
    line += 8;
    while (*line == '\t' || *line == ' ') line++;
    uint64_t mask = 0;
    for (; *line; line++) {
        char c = *line;
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0) break;
        mask = (mask << 4) | (uint64_t)digit;
    }
    return (mask & (1ull << (signal_number - 1))) != 0;
}

static int find_slot(pid_t tid) {
    for (int i = 0; i < slot_count; i++)
        if (slots[i].tid == tid) return i;
    return -1;
}

/// Parks the calling thread until the process dies (the crashed thread ends it). Past the park deadline the
/// process should have died long ago: end it here, of the crash's signal.
static void park_until_death(void) {
    for (;;) {
        uint64_t now = cly_monotonic_ns();
        uint64_t deadline = atomic_load(&park_deadline_ns);
        if (now >= deadline) break;
        uint64_t wait = deadline - now < PARK_POLL_NS ? deadline - now : PARK_POLL_NS;
        cly_futex_wait(&never_woken, 0, wait);
    }
    int crash_signal = atomic_load(&cly_crash_signal);
    cly_die_of(crash_signal != 0 ? crash_signal : SIGKILL);
}

static void dump_handler(int signal_number, siginfo_t *info, void *context) {
    (void)signal_number;
    int saved_errno = errno;
    if (atomic_load(&parking) == 0 || info->si_pid != getpid()) {
        errno = saved_errno;
        return;  // a foreign SIGSYS (seccomp, another process): ignore
    }
    int index = atomic_load(&capture_open) != 0 ? find_slot(cly_gettid()) : -1;
    if (index < 0) {
        park_until_death();  // beyond the captured threads, or too late to record: only stop
        errno = saved_errno;
        return;
    }
    cly_thread *thread = &slots[index];
    cly_dispatch_queue_label(thread->queue, sizeof thread->queue);  // this thread's own, as only it can read
    atomic_store(&dumping_tid[index], thread->tid);
    // sigsetjmp saves the signal mask with one rt_sigprocmask syscall; the crash handler siglongjmps here
    // if our own unwind faults (POSIX allows leaving a signal handler by siglongjmp).
    if (sigsetjmp(dump_jumps[index], 1) == 0) cly_unwind_from_ucontext((ucontext_t *)context, true, thread);
    atomic_store(&dumping_tid[index], 0);
    thread->answered = true;
    atomic_fetch_add(&answered_count, 1);
    cly_futex_wake(&answered_count);
    park_until_death();
    errno = saved_errno;
}

void cly_threads_escape_if_dumping(pid_t tid) {
    for (int i = 0; i < CLY_MAX_THREADS; i++)
        if (atomic_load(&dumping_tid[i]) == tid) {
            slots[i].truncated = true;
            siglongjmp(dump_jumps[i], 1);
        }
}

typedef struct {
    cly_thread *threads;
    int capacity;
    int count;
    pid_t crashed_tid;
} thread_census;

/// One /proc/self/task entry: a slot for every thread but the crashed one, up to the capacity.
/// The thread id a /proc/self/task entry names, or 0 for "." and "..".
static pid_t entry_tid(const char *name) {
    pid_t tid = 0;
    for (const char *c = name; *c >= '0' && *c <= '9'; c++) tid = tid * 10 + (*c - '0');
    return tid;
}

static void add_thread(const char *name, bool regular_file, void *context) {
    (void)regular_file;
    thread_census *census = context;
    pid_t tid = entry_tid(name);
    if (tid == 0 || tid == census->crashed_tid || census->count == census->capacity) return;
    cly_thread *thread = &census->threads[census->count++];
    thread->tid = tid;
    thread->frame_count = 0;
    thread->truncated = false;
    thread->answered = false;
    thread->queue[0] = 0;
    cly_thread_read_name(tid, thread->name, sizeof thread->name);
}

/// One /proc/self/task entry after the capture: a thread without a slot (beyond the capacity, or started since
/// the census) is sent SIGSYS, and parks.
static void stop_uncaptured_thread(const char *name, bool regular_file, void *context) {
    (void)regular_file;
    const thread_census *captured = context;
    pid_t tid = entry_tid(name);
    if (tid == 0 || tid == captured->crashed_tid) return;
    for (int i = 0; i < captured->capacity; i++)
        if (captured->threads[i].tid == tid) return;
    cly_tgkill(getpid(), tid, DUMP_SIGNAL);
}

int cly_threads_capture(pid_t crashed_tid, cly_thread *threads, int capacity, int *requested, int *answered) {
    *requested = 0;
    *answered = 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = dump_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(DUMP_SIGNAL, &action, NULL) != 0) return 0;

    thread_census census = {threads, capacity, 0, crashed_tid};
    cly_list_directory("/proc/self/task", add_thread, &census);
    int count = census.count;

    slots = threads;
    slot_count = count;
    atomic_store(&answered_count, 0);
    atomic_store(&park_deadline_ns, cly_monotonic_ns() + (uint64_t)CLY_PARKED_THREAD_LIMIT_MS * 1000000ull);
    atomic_store(&capture_open, 1);
    atomic_store(&parking, 1);
    pid_t pid = getpid();
    for (int i = 0; i < count; i++) {
        if (cly_thread_blocks_signal(threads[i].tid, DUMP_SIGNAL)) continue;
        if (cly_tgkill(pid, threads[i].tid, DUMP_SIGNAL) == 0) (*requested)++;
    }
    uint64_t deadline = cly_monotonic_ns() + (uint64_t)CLY_THREAD_WAIT_MS * 1000000ull;
    for (;;) {
        int seen = atomic_load(&answered_count);
        uint64_t now = cly_monotonic_ns();
        if (seen >= *requested || now >= deadline) break;
        cly_futex_wait(&answered_count, seen, deadline - now);
    }
    atomic_store(&capture_open, 0);  // a late answer parks without writing into a slot being reported
    *answered = atomic_load(&answered_count);
    thread_census rest = {threads, count, 0, crashed_tid};
    cly_list_directory("/proc/self/task", stop_uncaptured_thread, &rest);
    return count;
}

void cly_threads_extend_park(uint32_t limit_ms) {
    uint64_t deadline = cly_monotonic_ns() + (uint64_t)limit_ms * 1000000ull;
    if (deadline > atomic_load(&park_deadline_ns)) atomic_store(&park_deadline_ns, deadline);
}
