// The report file: one JSON object, format `cohorly-crash/2` (frames with their kind, async callers;
// docs/report-format.md), or `cohorly-crash/1` when install chose it (tests of the v1 reader).
//
// Runs inside the crash handler, after the stacks are captured. Call order and why each call is safe:
//   clock_gettime (AS-safe) -> cly_reserve_take: rename(2) of the space reserved at install to the `.tmp` name, else
//   open(O_CREAT|O_EXCL, 0600) (AS-safe) -> fstatfs (a plain system call: the free space caps the report) ->
//   write(2) per flushed 8 KiB through cly_writer (AS-safe) -> ftruncate (AS-safe: frees the unused reserve) ->
//   close -> rename(2) (AS-safe; the commit point) -> prune: open/getdents64/unlink (regular files only).
// Sections go in this order, flushed one by one, so a torn file keeps what matters most: header (signal,
// message, the crashed thread's Swift task: cly_task_current_id, a TLS read), crashed thread, context, the task's
// context (cly_task_context_copy_for_crash: process_vm_readv), other threads, modules, breadcrumbs (cly_breadcrumbs.c: at most
// CLY_MAX_BREADCRUMB_REPORT_BYTES, room kept for them while the other threads are written). A hard cap
// (CLY_MAX_REPORT_BYTES) drops frames and modules first; the JSON is always closed.
// Modules: the prepared table, plus any module a frame points into that the table lacks (found with
// `_dl_find_object`, see cly_modules.c).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>  // for the rename(2) prototype only: no stdio stream is used
#include <string.h>
#include <sys/vfs.h>

#include "cly_internal.h"
#include "cly_recorder.h"
#include "cly_tasks.h"
#include "cly_writer.h"

#define CLOSING_RESERVE 1024

static char write_buffer[8192];
static char task_context[CLY_MAX_TASK_CONTEXT];  // the crashed task's context, copied at the crash
static int open_report_fd = -1;
static cly_module extra_modules[CLY_MAX_EXTRA_MODULES];
static char extra_paths[CLY_MAX_EXTRA_MODULES][256];
static int extra_count;
static volatile bool fault_in_writer;  // test hook (cly_test_fault_in_writer)

static size_t report_limit = CLY_MAX_REPORT_BYTES;  // test hook: cly_test_set_report_limit

int cly_report_format = 2;

static char committed_name[CLY_MAX_PATH];  // the file name of the report last committed (cly_report_committed_name)

void cly_test_fault_in_writer(bool enabled) { fault_in_writer = enabled; }

void cly_test_set_report_limit(size_t bytes) { report_limit = bytes != 0 ? bytes : CLY_MAX_REPORT_BYTES; }

static const char *signal_name(int number) {
    switch (number) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "SIGNAL";
    }
}

static const char *mechanism_name(cly_mechanism mechanism) {
    switch (mechanism) {
    case CLY_MECHANISM_SWIFT_FATAL: return "swift_fatal";
    case CLY_MECHANISM_CXX_TERMINATE: return "cxx_terminate";
    default: return "signal";
    }
}

static bool in_table(const cly_module_table *table, uintptr_t pc) {
    if (table != NULL)
        for (int i = 0; i < table->count; i++)
            if (pc - table->modules[i].base < table->modules[i].size) return true;
    for (int i = 0; i < extra_count; i++)
        if (pc - extra_modules[i].base < extra_modules[i].size) return true;
    return false;
}

/// Adds the modules that frames point into but the prepared table lacks (loaded since its last refresh).
static void find_extra_modules(const cly_thread *thread, const cly_module_table *table) {
    for (int i = 0; i < thread->frame_count && extra_count < CLY_MAX_EXTRA_MODULES; i++) {
        uintptr_t pc = thread->frames[i];
        if (in_table(table, pc)) continue;
        if (cly_modules_find_extra(pc, &extra_modules[extra_count], extra_paths[extra_count], 256)) extra_count++;
    }
    for (int i = 0; i < thread->async.count && extra_count < CLY_MAX_EXTRA_MODULES; i++) {
        uintptr_t pc = thread->async.frames[i];
        if (in_table(table, pc)) continue;
        if (cly_modules_find_extra(pc, &extra_modules[extra_count], extra_paths[extra_count], 256)) extra_count++;
    }
}

static void write_module(cly_writer *w, const cly_module *module, const char *path) {
    static const char digits[] = "0123456789abcdef";
    char build_id[65];
    size_t n = 0;
    for (int i = 0; i < module->build_id_length && i < 32; i++) {
        build_id[n++] = digits[module->build_id[i] >> 4];
        build_id[n++] = digits[module->build_id[i] & 0xf];
    }
    build_id[n] = 0;
    cly_writer_begin_object(w, NULL);
    cly_writer_string(w, "path", path, CLY_MAX_PATH);
    cly_writer_hex(w, "base", module->base);
    cly_writer_hex(w, "size", module->size);
    cly_writer_string(w, "build_id", build_id, sizeof build_id);
    cly_writer_end_object(w);
}

/// "<dir>/<timestamp_ms, 16 digits>-<pid>-<insert_id><suffix>"
static size_t report_path(char *out, uint64_t timestamp_ms, pid_t pid, const char *suffix) {
    size_t n = strlen(cly_report_directory);
    memcpy(out, cly_report_directory, n);
    out[n++] = '/';
    char digits[20];
    size_t length = cly_format_uint(timestamp_ms, digits);
    for (size_t pad = length; pad < 16; pad++) out[n++] = '0';
    memcpy(out + n, digits, length);
    n += length;
    out[n++] = '-';
    n += cly_format_uint((uint64_t)pid, out + n);
    out[n++] = '-';
    memcpy(out + n, cly_insert_id_for_crash(), 36);
    n += 36;
    size_t suffix_length = strlen(suffix);
    memcpy(out + n, suffix, suffix_length + 1);
    return n + suffix_length;
}

static bool is_report_name(const char *name) {
    size_t length = strlen(name);
    if (length < 22 || strcmp(name + length - 5, ".json") != 0) return false;
    for (int i = 0; i < 16; i++)
        if (name[i] < '0' || name[i] > '9') return false;
    return name[16] == '-';
}

typedef struct {
    char oldest[256];
    int count;
} report_census;

/// Counts committed reports: regular files only, so a directory or symlink named like a report is neither
/// counted nor removed.
static void count_report(const char *name, bool regular_file, void *context) {
    report_census *census = context;
    if (!regular_file || !is_report_name(name) || strlen(name) >= sizeof census->oldest) return;
    census->count++;
    if (census->oldest[0] == 0 || strcmp(name, census->oldest) < 0) strcpy(census->oldest, name);
}

/// Drops the oldest committed reports beyond CLY_MAX_REPORTS (names sort by crash time).
static void prune_reports(void) {
    for (int round = 0; round < 64; round++) {
        report_census census = {{0}, 0};
        if (cly_list_directory(cly_report_directory, count_report, &census) != 0) return;
        if (census.count <= CLY_MAX_REPORTS) return;
        char path[CLY_MAX_PATH + 300];
        size_t n = strlen(cly_report_directory);
        memcpy(path, cly_report_directory, n);
        path[n++] = '/';
        strcpy(path + n, census.oldest);
        if (unlink(path) != 0) return;
    }
}

/// The size cap of this report: CLY_MAX_REPORT_BYTES (or the test cap), cut to the `reserved` bytes plus what the
/// file system still has free (fstatfs, a plain system call), so that on a full disk the report is a smaller
/// whole one — the header and the crashed thread first — rather than a torn one.
static size_t room_for_report(int fd, size_t reserved) {
    struct statfs info;
    if (syscall(SYS_fstatfs, fd, &info) != 0) return report_limit;
    uint64_t free_bytes = (uint64_t)info.f_bavail * (uint64_t)info.f_bsize;
    uint64_t margin = 2 * (uint64_t)info.f_bsize + sizeof write_buffer;  // the directory entry, a partial block
    uint64_t room = reserved + (free_bytes > margin ? free_bytes - margin : 0);
    if (room < CLY_MIN_REPORT_RESERVE) room = CLY_MIN_REPORT_RESERVE;  // try: the header may still fit
    return room < report_limit ? (size_t)room : report_limit;
}

void cly_report_mark_recrash(int signal_number) {
    int fd = open_report_fd;
    if (fd < 0) return;
    char marker[64] = "\n#cohorly-recrash signal=";
    size_t n = strlen(marker);
    n += cly_format_uint((uint64_t)signal_number, marker + n);
    marker[n++] = '\n';
    (void)!write(fd, marker, n);
}

const char *cly_report_committed_name(void) { return committed_name; }

bool cly_report_write(const cly_report_input *input) {
    const cly_crash *crash = input->crash;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t timestamp_ms = (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
    char tmp_path[CLY_MAX_PATH + 128];
    char final_path[CLY_MAX_PATH + 128];
    report_path(tmp_path, timestamp_ms, input->pid, ".tmp");
    report_path(final_path, timestamp_ms, input->pid, ".json");

    const cly_module_table *table = cly_modules_current();
    extra_count = 0;
    find_extra_modules(input->crashed, table);
    for (int i = 0; i < input->other_count; i++) find_extra_modules(&input->others[i], table);
    size_t breadcrumb_bytes = cly_breadcrumbs_prepare_for_crash();

    // The space reserved at install (cly_reserve.c), else a new file; the report is sized to what the disk has.
    size_t reserved = 0;
    int fd = cly_reserve_take(tmp_path, &reserved);
    if (fd < 0) fd = open(tmp_path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    size_t limit = room_for_report(fd, reserved);
    open_report_fd = fd;
    cly_writer writer;
    cly_writer *w = &writer;
    cly_writer_init(w, fd, write_buffer, sizeof write_buffer, limit);

    // Header.
    cly_writer_begin_object(w, NULL);
    cly_writer_string(w, "format", cly_report_format >= 2 ? "cohorly-crash/2" : "cohorly-crash/1", 32);
    cly_writer_string(w, "insert_id", cly_insert_id_for_crash(), 36);
    cly_writer_uint(w, "timestamp_ms", timestamp_ms);
    cly_writer_uint(w, "pid", (uint64_t)input->pid);
    cly_writer_string(w, "executable", cly_executable_path, CLY_MAX_PATH);
    cly_writer_string(w, "mechanism", mechanism_name(crash->mechanism), 32);
    cly_writer_begin_object(w, "signal");
    cly_writer_uint(w, "number", (uint64_t)crash->signal_number);
    cly_writer_string(w, "name", signal_name(crash->signal_number), 16);
    cly_writer_int(w, "code", crash->signal_code);
    cly_writer_hex(w, "address", crash->fault_address);
    cly_writer_end_object(w);
    // Escaping can grow a byte to six ("\u00XX"): room is checked for the worst case.
    if (crash->message != NULL && cly_writer_has_room(w, strnlen(crash->message, CLY_MAX_MESSAGE) * 6 + 64, CLOSING_RESERVE))
        cly_writer_string(w, "message", crash->message, CLY_MAX_MESSAGE);
    if (crash->cxx_type != NULL || crash->cxx_what != NULL) {
        cly_writer_begin_object(w, "cxx");
        cly_writer_string(w, "type", crash->cxx_type ? crash->cxx_type : "", CLY_MAX_TYPE_NAME);
        cly_writer_string(w, "what", crash->cxx_what ? crash->cxx_what : "", CLY_MAX_MESSAGE);
        cly_writer_end_object(w);
    }
    // A stack overflow faults just below the stack pointer (in the guard page).
    uintptr_t sp = input->has_registers ? input->registers[1] : 0;
    bool overflow = crash->signal_number == SIGSEGV && sp != 0 && crash->fault_address + 65536 >= sp &&
                    crash->fault_address <= sp + 4096;
    cly_writer_bool(w, "stack_overflow", overflow);
    // The Swift task the crashed thread was running (this is the crashed thread: cly_tasks.c).
    uint64_t task = cly_task_current_id();
    if (task != 0) cly_writer_uint(w, "task", task);
    cly_writer_flush(w);
    if (fault_in_writer) *(volatile int *)0 = 0;  // test hook: a crash inside the handler

    // Crashed thread, then context, then the other threads.
    // Room kept for the modules while threads are written (they are needed to symbolicate any frame).
    size_t module_bytes = 0;
    for (int i = 0; table != NULL && i < table->count; i++)
        module_bytes += strlen(table->pool + table->modules[i].path_offset) + 160;
    for (int i = 0; i < extra_count; i++) module_bytes += strlen(extra_paths[i]) + 160;
    if (module_bytes > limit / 2) module_bytes = limit / 2;
    size_t thread_reserve = CLOSING_RESERVE + module_bytes + breadcrumb_bytes;
    cly_report_write_thread(w, "crashed_thread", input->crashed, true,
                            input->has_registers ? input->registers : NULL, CLOSING_RESERVE, cly_report_format);
    cly_writer_flush(w);
    if (input->context_length > 0 && cly_writer_has_room(w, input->context_length + 16, CLOSING_RESERVE))
        cly_writer_json(w, "context", input->context, input->context_length);
    else cly_writer_json(w, "context", "{}", 2);
    // The context is on disk before the task's is looked up: that walk reads the runtime's task-local list, so a
    // task corrupted enough to fault there costs the task context, not the device context.
    cly_writer_flush(w);
    size_t task_context_length = cly_task_context_copy_for_crash(task_context, sizeof task_context);
    if (task_context_length > 0 && cly_writer_has_room(w, task_context_length + 32, CLOSING_RESERVE))
        cly_writer_json(w, "task_context", task_context, task_context_length);
    cly_writer_flush(w);
    cly_writer_begin_array(w, "threads");
    for (int i = 0; i < input->other_count; i++) {
        if (!cly_writer_has_room(w, 320, thread_reserve)) break;
        cly_report_write_thread(w, NULL, &input->others[i], false, NULL, thread_reserve, cly_report_format);
    }
    cly_writer_end_array(w);
    cly_writer_flush(w);

    // Modules.
    cly_writer_begin_array(w, "modules");
    for (int i = 0; table != NULL && i < table->count; i++) {
        const cly_module *module = &table->modules[i];
        const char *path = table->pool + module->path_offset;
        if (!cly_writer_has_room(w, strlen(path) * 6 + 200, CLOSING_RESERVE)) break;
        write_module(w, module, path);
    }
    for (int i = 0; i < extra_count; i++) {
        if (!cly_writer_has_room(w, strlen(extra_paths[i]) * 6 + 200, CLOSING_RESERVE)) break;
        write_module(w, &extra_modules[i], extra_paths[i]);
    }
    cly_writer_end_array(w);
    cly_writer_flush(w);
    if (breadcrumb_bytes > 0 && cly_writer_has_room(w, breadcrumb_bytes, CLOSING_RESERVE)) cly_breadcrumbs_write(w);
    cly_writer_uint(w, "threads_requested", (uint64_t)input->threads_requested);
    cly_writer_uint(w, "threads_answered", (uint64_t)input->threads_answered);
    cly_writer_uint(w, "capture_ns", cly_monotonic_ns() - input->start_ns);
    cly_writer_bool(w, "complete", true);
    cly_writer_end_object(w);
    cly_writer_raw(w, "\n", 1);
    cly_writer_flush(w);
    open_report_fd = -1;
    // Frees the reserved blocks past the end (growing by one byte first: a cut to the same size frees nothing).
    if (reserved > 0 && !w->failed) {
        (void)!ftruncate(fd, (off_t)w->written + 1);
        (void)!ftruncate(fd, (off_t)w->written);
    }
    close(fd);
    if (w->failed || rename(tmp_path, final_path) != 0) return false;  // a failed write stays a .tmp
    size_t directory_length = strlen(cly_report_directory) + 1;
    size_t name_length = strnlen(final_path + directory_length, sizeof committed_name - 1);
    memcpy(committed_name, final_path + directory_length, name_length);
    committed_name[name_length] = '\0';
    prune_reports();
    return true;
}
