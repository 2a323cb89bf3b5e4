// The crash-time sender: once the crash handler has committed a report, it starts the app's own executable in
// sender mode (COHORLY_CRASH_SENDER, cly_sender_mode.c), which turns that report into an event and sends it —
// within seconds, with no later launch. The process is detached from the dying app: a session of its own, stdio
// on /dev/null, no descriptor of the app (a lock the app held must die with the app), default signal
// dispositions and an empty signal mask.
//
// Normal code (install): cly_crash_time_sender_prepare copies the executable's path, argv and environment into
// one block (malloc, never freed) and publishes it with an atomic pointer; the environment has one entry more,
// `COHORLY_CRASH_SENDER_REPORTS=`, followed by CLY_MAX_PATH bytes for the report's name.
//
// The crash path (cly_crash_time_sender_start, called by cly_handle_crash after the commit), in call order:
//   - load the prepared block (atomic); copy the committed report's name into its slot (memcpy, bounded);
//   - sigprocmask: block every signal, so none runs the app's handlers in the child (it shares our memory);
//   - clone(CLONE_VM) on a static stack: the child borrows our memory until it execs, so nothing is copied and
//     nothing is allocated (what posix_spawn and the Swift runtime's backtracer do). The crashing thread goes on at
//     once (scripts/bench-crash-delivery measures what it adds): since Linux 5.16 a process dying of a core-dump
//     signal kills only its own thread group, not another process sharing its memory. Before 5.16 it would kill
//     the child too, so there the clone adds CLONE_VFORK and the thread waits until the child has exec'd (the
//     exec leaves our memory) — a wait the scheduler may stretch on a busy machine;
//   - in the child: sigaction (every signal to SIG_DFL), setsid, open("/dev/null") + dup2 onto 0, 1, 2,
//     close_range(3, ~0) (else close() up to the descriptor limit), sigprocmask (empty), execve; when the exec
//     fails (no exec permission, seccomp, a missing file) the child _exits: the report stays, and the next launch
//     sends it. The child touches none of our memory but its stack (errno aside: it shares the crashed thread's
//     thread pointer, and the handler restores errno anyway);
//   - back in the parent: sigprocmask (the previous mask). When this process is the init of its PID namespace
//     (pid 1: a container's only process), everything in the namespace dies with it, the sender too: the handler
//     then waits for the sender (waitpid WNOHANG + nanosleep, at most the prepared bound) before it dies.
// Every call is on POSIX's async-signal-safe list (sigaction, sigprocmask, setsid, open, dup2, close, execve,
// _exit, waitpid, kill, nanosleep, getpid) or a raw system call (clone through glibc's assembly wrapper, which
// touches no userspace state; close_range; prlimit through getrlimit).
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "cly_crash_time_sender.h"
#include "cly_internal.h"

typedef struct {
    const char *path;
    char **argv;
    char **envp;
    char *report_value;  // the value of the report entry: CLY_MAX_PATH bytes, written at crash time
    uint32_t init_wait_ms;
    bool wait_for_exec;  // Linux before 5.16: CLONE_VFORK (see above)
} prepared_sender;

static _Atomic(prepared_sender *) prepared;
#define CHILD_STACK_BYTES (32 * 1024)
static _Alignas(16) char child_stack[CHILD_STACK_BYTES];  // the child's stack until it execs (one crash per process)

/// Whether a core-dump death of this process would also kill a process that shares its memory (Linux < 5.16).
static bool core_dump_kills_memory_sharers(void) {
    struct utsname names;
    if (uname(&names) != 0) return true;
    char *end = NULL;
    long major = strtol(names.release, &end, 10);
    long minor = end != NULL && *end == '.' ? strtol(end + 1, NULL, 10) : 0;
    return major < 5 || (major == 5 && minor < 16);
}

static size_t count_strings(char *const strings[]) {
    size_t count = 0;
    while (strings[count] != NULL) count++;
    return count;
}

int cly_crash_time_sender_prepare(const char *path, char *const argv[], char *const envp[],
                                  const char *report_variable, uint32_t init_wait_ms) {
    if (path == NULL || argv == NULL || envp == NULL || report_variable == NULL) return EINVAL;
    size_t variable_length = strlen(report_variable);
    size_t argc = count_strings(argv), envc = count_strings(envp);
    size_t bytes = sizeof(prepared_sender) + (argc + 1 + envc + 2) * sizeof(char *) + strlen(path) + 1 +
                   variable_length + 1 + CLY_MAX_PATH;
    for (size_t i = 0; i < argc; i++) bytes += strlen(argv[i]) + 1;
    for (size_t i = 0; i < envc; i++) bytes += strlen(envp[i]) + 1;
    char *block = malloc(bytes);
    if (block == NULL) return ENOMEM;
    prepared_sender *sender = (prepared_sender *)block;
    char **pointers = (char **)(block + sizeof(prepared_sender));
    char *strings = (char *)(pointers + argc + 1 + envc + 2);
    sender->argv = pointers;
    sender->envp = pointers + argc + 1;
    sender->init_wait_ms = init_wait_ms;
    sender->wait_for_exec = core_dump_kills_memory_sharers();
    size_t length = strlen(path) + 1;
    memcpy(strings, path, length);
    sender->path = strings;
    strings += length;
    for (size_t i = 0; i < argc; i++) {
        length = strlen(argv[i]) + 1;
        memcpy(strings, argv[i], length);
        sender->argv[i] = strings;
        strings += length;
    }
    sender->argv[argc] = NULL;
    size_t kept = 0;
    for (size_t i = 0; i < envc; i++) {
        // The report entry is ours alone: one inherited from the app's environment would name another report.
        if (strncmp(envp[i], report_variable, variable_length) == 0 && envp[i][variable_length] == '=') continue;
        length = strlen(envp[i]) + 1;
        memcpy(strings, envp[i], length);
        sender->envp[kept++] = strings;
        strings += length;
    }
    memcpy(strings, report_variable, variable_length);
    strings[variable_length] = '=';
    sender->report_value = strings + variable_length + 1;
    sender->report_value[0] = '\0';
    sender->envp[kept++] = strings;
    sender->envp[kept] = NULL;
    // The memory of a sender prepared before is never freed: a crash on another thread may be reading it.
    atomic_store(&prepared, sender);
    return 0;
}

void cly_crash_time_sender_disarm(void) { atomic_store(&prepared, NULL); }

static void close_inherited_descriptors(void) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0) return;
#endif
    struct rlimit limit;
    rlim_t highest = getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
    if (highest > 65536) highest = 65536;
    for (int fd = 3; fd < (int)highest; fd++) close(fd);
}

/// The child, on its own stack in the parent's memory until execve: nothing here writes the parent's state (errno
/// aside, the crashed thread's, whose value the handler restores anyway).
static int child_main(void *argument) {
    const prepared_sender *sender = argument;
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    for (int signal_number = 1; signal_number < NSIG; signal_number++)
        if (signal_number != SIGKILL && signal_number != SIGSTOP) sigaction(signal_number, &default_action, NULL);
    setsid();
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2) close(null);
    }
    close_inherited_descriptors();
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(sender->path, sender->argv, sender->envp);
    _exit(127);
}

/// The pid 1 wait: until the sender ended or `wait_ms` passed.
static void wait_for_sender(pid_t pid, uint32_t wait_ms) {
    uint64_t deadline = cly_monotonic_ns() + (uint64_t)wait_ms * 1000000ull;
    while (cly_monotonic_ns() < deadline) {
        int status = 0;
        pid_t result = waitpid(pid, &status, WNOHANG | __WALL);
        if (result == pid) return;
        if (result < 0 && (errno != ECHILD || kill(pid, 0) != 0)) return;  // reaped elsewhere (SIGCHLD ignored)
        struct timespec pause = {0, 5 * 1000000};
        nanosleep(&pause, NULL);
    }
}

/// Starts the prepared sender for `report_name` with `stack` (`stack_bytes`) as the child's stack until it execs;
/// returns its pid or a negative errno value. Signal-safe.
static int start(const char *report_name, char *stack, size_t stack_bytes, uint64_t *blocked_ns) {
    prepared_sender *sender = atomic_load(&prepared);
    if (sender == NULL) return -ENOENT;
    size_t length = strnlen(report_name, CLY_MAX_PATH - 1);
    memcpy(sender->report_value, report_name, length);
    sender->report_value[length] = '\0';
    sigset_t all, previous;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &previous);
    uint64_t began = cly_monotonic_ns();
    int flags = CLONE_VM | SIGCHLD | (sender->wait_for_exec ? CLONE_VFORK : 0);
    int pid = clone(child_main, stack + stack_bytes, flags, sender);
    int error = pid < 0 ? errno : 0;
    if (blocked_ns != NULL) *blocked_ns = cly_monotonic_ns() - began;
    if (pid > 0 && getpid() == 1 && sender->init_wait_ms > 0) wait_for_sender(pid, sender->init_wait_ms);
    sigprocmask(SIG_SETMASK, &previous, NULL);
    return pid > 0 ? pid : -error;
}

void cly_crash_time_sender_start(const char *report_name) {
    (void)start(report_name, child_stack, sizeof child_stack, NULL);
}

int cly_crash_time_sender_start_for_test(const char *report_name, uint64_t *blocked_ns) {
    // A stack of its own for every start (never freed): an earlier child may still be on its way to its exec.
    void *stack = mmap(NULL, CHILD_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return -errno;
    return start(report_name, stack, CHILD_STACK_BYTES, blocked_ns);
}
