// A streaming JSON writer for the crash path: a caller-supplied buffer, no allocation, no stdio.
#ifndef CLY_WRITER_H
#define CLY_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cly_writer {
    int fd;           // -1: count only (measures what would be written; nothing fails)
    char *buffer;
    size_t capacity;
    size_t used;
    size_t written;   // bytes already sent to fd
    size_t limit;     // hard cap of the whole output
    bool failed;      // a write error happened; everything after is dropped
    bool needs_comma; // the next value in the current object/array needs a separating comma
} cly_writer;

/// Starts writing to `fd` through `buffer` (`fd` -1: only counts the bytes). Signal-safe.
void cly_writer_init(cly_writer *w, int fd, char *buffer, size_t capacity, size_t limit);
/// Writes the buffered bytes (write(2) in a loop, EINTR retried). Signal-safe.
void cly_writer_flush(cly_writer *w);
/// Bytes produced so far (written + buffered).
size_t cly_writer_size(const cly_writer *w);
/// Whether `bytes` more still fit under the limit while keeping `reserve` bytes for closing the JSON.
bool cly_writer_has_room(const cly_writer *w, size_t bytes, size_t reserve);

/// Raw bytes, no escaping. Signal-safe.
void cly_writer_raw(cly_writer *w, const char *bytes, size_t length);
/// Opens/closes an object or array; `key` may be NULL inside arrays. Signal-safe.
void cly_writer_begin_object(cly_writer *w, const char *key);
void cly_writer_end_object(cly_writer *w);
void cly_writer_begin_array(cly_writer *w, const char *key);
void cly_writer_end_array(cly_writer *w);
/// Members (key may be NULL inside arrays). Strings are escaped and repaired to valid UTF-8; `max_bytes`
/// bounds how much of `value` is read (stops at NUL). Signal-safe.
void cly_writer_string(cly_writer *w, const char *key, const char *value, size_t max_bytes);
void cly_writer_hex(cly_writer *w, const char *key, uint64_t value);
void cly_writer_uint(cly_writer *w, const char *key, uint64_t value);
void cly_writer_int(cly_writer *w, const char *key, int64_t value);
void cly_writer_bool(cly_writer *w, const char *key, bool value);
/// A member whose value is already JSON (the context object). Signal-safe.
void cly_writer_json(cly_writer *w, const char *key, const char *json, size_t length);

/// Formats `value` in decimal / lowercase hex (with "0x") into `out`; returns the length. Signal-safe.
size_t cly_format_uint(uint64_t value, char *out);
size_t cly_format_hex(uint64_t value, char *out);

#endif
