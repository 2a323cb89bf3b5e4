// The one line a crash prints on stderr: what crashed and where, for whoever reads the process's output (a
// terminal, `journalctl`, `docker logs`), since the Swift runtime's backtracer no longer runs by default.
//
//   CohorlyCrash: crashed: <reason> in <function> (report written; SWIFT_BACKTRACE=enable=yes adds the Swift
//   runtime's backtrace)
//
// (or "no report: …" when none was written, and without the hint when the runtime's backtracer runs anyway).
//
// What runs (in the crash handler, after the report is committed; once per process), in call order:
//   - the reason: the Swift runtime's fatal-error message (`fatalError`, debug-build traps, `as!`) up to its first
//     line break, else the C++ exception's type and what(), else the signal with what it means for Swift code
//     (SIGILL/SIGTRAP: a failed runtime check — in release builds its message exists only in the debug info);
//   - the function: the innermost frame of the crashed thread in the app's executable, the standard library's
//     own skipped (else frame 0), named by cly_symbol_describe (the symbol table, read within one time budget for
//     the line; a Swift name shortened to Module.Type.name);
//   - one write(2) of the line.
// Everything is static memory, string functions of POSIX.1-2016, and calls of cly_symbol_name.c.
#include <errno.h>
#include <string.h>

#include "cly_internal.h"

#define LINE_BYTES 1024
#define REASON_BYTES 480

static atomic_int line_written;
static char line[LINE_BYTES];

typedef struct {
    char *out;
    size_t capacity;
    size_t used;
} line_builder;

static void append(line_builder *b, const char *text, size_t length) {
    if (b->used + 1 >= b->capacity) return;
    size_t room = b->capacity - 1 - b->used;
    if (length > room) length = room;
    memcpy(b->out + b->used, text, length);
    b->used += length;
    b->out[b->used] = 0;
}

static void append_text(line_builder *b, const char *text) { append(b, text, strlen(text)); }

/// Appends at most `limit` bytes of `text` up to its first line break, control characters as spaces.
static void append_one_line(line_builder *b, const char *text, size_t limit) {
    size_t length = 0;
    while (length < limit && text[length] != 0 && text[length] != '\n') length++;
    while (length > 0 && text[length - 1] == ' ') length--;
    size_t start = b->used;
    append(b, text, length);
    for (size_t i = start; i < b->used; i++)
        if ((unsigned char)b->out[i] < 0x20) b->out[i] = ' ';
}

static void append_hex(line_builder *b, uintptr_t value) {
    char digits[2 + 16];
    size_t n = 0;
    digits[n++] = '0';
    digits[n++] = 'x';
    int shift = 60;
    while (shift > 0 && ((value >> shift) & 0xf) == 0) shift -= 4;
    for (; shift >= 0; shift -= 4) digits[n++] = "0123456789abcdef"[(value >> shift) & 0xf];
    append(b, digits, n);
}

static void append_reason(line_builder *b, const cly_crash *crash) {
    if (crash->message != NULL && crash->message[0] != 0) {
        append_one_line(b, crash->message, REASON_BYTES);
        return;
    }
    if (crash->cxx_type != NULL) {
        append_text(b, "uncaught C++ exception ");
        append_one_line(b, crash->cxx_type, 160);
        if (crash->cxx_what != NULL && crash->cxx_what[0] != 0) {
            append_text(b, ": ");
            append_one_line(b, crash->cxx_what, REASON_BYTES - 200);
        }
        return;
    }
    switch (crash->signal_number) {
    case SIGILL:
    case SIGTRAP:
        append_text(b, crash->signal_number == SIGILL ? "SIGILL" : "SIGTRAP");
        append_text(b, " (a failed Swift runtime check: a force unwrap of nil, an index out of range, an overflow,"
                       " a precondition…; the report names it)");
        break;
    case SIGSEGV:
    case SIGBUS:
        append_text(b, crash->signal_number == SIGSEGV ? "SIGSEGV (bad memory access at " : "SIGBUS (bus error at ");
        append_hex(b, crash->fault_address);
        append_text(b, ")");
        break;
    case SIGFPE: append_text(b, "SIGFPE (arithmetic error)"); break;
    case SIGABRT: append_text(b, "SIGABRT (abort)"); break;
    default: append_text(b, "a fatal signal"); break;
    }
}

/// Frame `index` of `thread` as an address inside its instruction (a return address moved back into its call).
static uintptr_t frame_address(const cly_thread *thread, int index) {
    bool exact = index == 0 && thread->first_frame_kind == CLY_FRAME_PC;
    return exact ? thread->frames[index] : thread->frames[index] - 1;
}

/// Names the crashing function into `out`: the innermost frame in the executable that is not the Swift standard
/// library's (linked into the executable by `--static-swift-stdlib`: `fatalError`'s own frames), else frame 0.
/// A crash that did not come from a signal (C++ terminate) was unwound from inside the recorder, which is in the
/// executable too: its frames (the first run of executable frames, up to the C++ runtime's) are skipped.
/// Returns the length (0: nothing to name).
static size_t name_crashing_function(const cly_crash *crash, const cly_thread *crashed, char *out, size_t size) {
    cly_symbol_budget deadline = {
        cly_monotonic_ns() + (uint64_t)CLY_CRASH_LINE_SYMBOL_WALL_BUDGET_MS * 1000000ull,
        cly_thread_cpu_ns() + (uint64_t)CLY_CRASH_LINE_SYMBOL_CPU_BUDGET_MS * 1000000ull,
    };
    if (crashed == NULL || crashed->frame_count == 0) {
        if (crash->context == NULL) return 0;
        return cly_symbol_describe((uintptr_t)crash->context->uc_mcontext.gregs[REG_RIP], &deadline, out, size);
    }
    int first = 0;
    if (crash->context == NULL)
        while (first < crashed->frame_count && cly_symbol_in_executable(frame_address(crashed, first))) first++;
    for (int i = first, tries = 0; i < crashed->frame_count && tries < 4; i++) {
        if (!cly_symbol_in_executable(frame_address(crashed, i))) continue;
        tries++;
        size_t n = cly_symbol_describe(frame_address(crashed, i), &deadline, out, size);
        if (n > 0 && strncmp(out, "Swift.", 6) != 0) return n;
    }
    return cly_symbol_describe(frame_address(crashed, 0), &deadline, out, size);
}

void cly_crash_line_write(const cly_crash *crash, const cly_thread *crashed, const char *report_state,
                          bool backtracer_skipped) {
    if (atomic_exchange(&line_written, 1) != 0) return;
    line_builder b = {line, sizeof line, 0};
    line[0] = 0;
    append_text(&b, "CohorlyCrash: crashed: ");
    append_reason(&b, crash);
    static char function[CLY_CRASH_LINE_FUNCTION_BYTES];
    if (name_crashing_function(crash, crashed, function, sizeof function) > 0) {
        append_text(&b, " in ");
        append_text(&b, function);
    }
    append_text(&b, " (");
    append_text(&b, report_state);
    if (backtracer_skipped) append_text(&b, "; SWIFT_BACKTRACE=enable=yes adds the Swift runtime's backtrace");
    append_text(&b, ")");
    if (b.used + 1 < b.capacity) {
        line[b.used++] = '\n';
    } else {
        line[b.used - 1] = '\n';
    }
    size_t written = 0;
    for (int attempt = 0; attempt < 8 && written < b.used; attempt++) {
        ssize_t n = write(STDERR_FILENO, line + written, b.used - written);
        if (n > 0) written += (size_t)n;
        else if (n < 0 && errno != EINTR) break;
    }
}
