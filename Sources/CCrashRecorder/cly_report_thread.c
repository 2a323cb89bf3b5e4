// One thread of a crash report: its frames (format v2: objects with their kind; v1: bare addresses) and, in
// v2, its async callers. Runs inside the crash handler (cly_report.c calls it); only cly_writer calls, which
// touch the report's static buffer and write(2).
#include "cly_async.h"
#include "cly_internal.h"
#include "cly_writer.h"

static const char *const register_names[18] = {"rip", "rsp", "rbp", "rax", "rbx", "rcx", "rdx", "rsi", "rdi",
                                              "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "eflags"};

static const char *kind_name(int kind) {
    switch (kind) {
    case CLY_FRAME_PC: return "pc";
    case CLY_FRAME_ASYNC_RESUME: return "async_resume";
    default: return "return_address";
    }
}

static void write_frame(cly_writer *w, uintptr_t address, int kind, int format) {
    if (format < 2) {
        cly_writer_hex(w, NULL, address);
        return;
    }
    cly_writer_begin_object(w, NULL);
    cly_writer_hex(w, "addr", address);
    cly_writer_string(w, "kind", kind_name(kind), 16);
    cly_writer_end_object(w);
}

void cly_report_write_thread(cly_writer *w, const char *key, const cly_thread *thread, bool crashed,
                             const uintptr_t *registers, size_t reserve, int format) {
    size_t frame_bytes = format < 2 ? 24 : 64;
    cly_writer_begin_object(w, key);
    cly_writer_uint(w, "tid", (uint64_t)thread->tid);
    // A thread running a dispatch queue's work is named by the queue's label; its kernel name (libdispatch's root
    // queue, cut to 15 characters) goes beside it.
    if (thread->queue[0] != 0) {
        cly_writer_string(w, "name", thread->queue, sizeof thread->queue);
        cly_writer_string(w, "comm", thread->name, sizeof thread->name);
    } else {
        cly_writer_string(w, "name", thread->name, sizeof thread->name);
    }
    cly_writer_bool(w, "crashed", crashed);
    cly_writer_begin_array(w, "frames");
    bool truncated = thread->truncated;
    int count = thread->answered ? thread->frame_count : 0;
    int written = 0;
    for (; written < count; written++) {
        if (!cly_writer_has_room(w, frame_bytes, reserve + 512)) {
            truncated = true;
            break;
        }
        int kind = written == 0 ? thread->first_frame_kind : CLY_FRAME_RETURN_ADDRESS;
        write_frame(w, thread->frames[written], kind, format);
    }
    cly_writer_end_array(w);
    cly_writer_bool(w, "truncated", truncated);
    // The chain only with the physical frame it continues from, and only when it all fits.
    const cly_async_chain *chain = &thread->async;
    if (format >= 2 && chain->count > 0 && chain->anchor < written &&
        cly_writer_has_room(w, 96 + (size_t)chain->count * frame_bytes, reserve + 512)) {
        cly_writer_begin_object(w, "async");
        cly_writer_uint(w, "anchor", (uint64_t)chain->anchor);
        cly_writer_string(w, "stop", cly_async_stop_name(chain->stop), 16);
        cly_writer_begin_array(w, "frames");
        for (int i = 0; i < chain->count; i++) write_frame(w, chain->frames[i], CLY_FRAME_ASYNC_RESUME, format);
        cly_writer_end_array(w);
        cly_writer_end_object(w);
    }
    if (registers != NULL) {
        cly_writer_begin_object(w, "registers");
        for (int i = 0; i < 18; i++) cly_writer_hex(w, register_names[i], registers[i]);
        cly_writer_end_object(w);
    }
    cly_writer_end_object(w);
}
