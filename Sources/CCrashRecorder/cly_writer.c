// Streaming JSON writer used inside the crash handler.
//
// Signal safety: it touches only the caller's buffer and calls write(2) (on the async-signal-safe list).
// Numbers are formatted by hand (no snprintf); strings are escaped byte by byte and repaired to valid UTF-8
// (invalid sequences become U+FFFD), so whatever a message or thread name holds, the output parses.
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cly_internal.h"
#include "cly_writer.h"

void cly_writer_init(cly_writer *w, int fd, char *buffer, size_t capacity, size_t limit) {
    w->fd = fd;
    w->buffer = buffer;
    w->capacity = capacity;
    w->used = 0;
    w->written = 0;
    w->limit = limit;
    w->failed = false;
    w->needs_comma = false;
}

void cly_writer_flush(cly_writer *w) {
    size_t offset = 0;
    while (w->fd >= 0 && offset < w->used && !w->failed) {
        ssize_t n = write(w->fd, w->buffer + offset, w->used - offset);  // write(2): async-signal-safe
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            w->failed = true;
            break;
        }
        offset += (size_t)n;
    }
    w->written += w->used;
    w->used = 0;
}

size_t cly_writer_size(const cly_writer *w) { return w->written + w->used; }

bool cly_writer_has_room(const cly_writer *w, size_t bytes, size_t reserve) {
    return cly_writer_size(w) + bytes + reserve <= w->limit;
}

static void put(cly_writer *w, char c) {
    if (w->used == w->capacity) cly_writer_flush(w);
    w->buffer[w->used++] = c;
}

void cly_writer_raw(cly_writer *w, const char *bytes, size_t length) {
    for (size_t i = 0; i < length; i++) put(w, bytes[i]);
}

static void put_cstr(cly_writer *w, const char *s) { cly_writer_raw(w, s, strlen(s)); }

size_t cly_format_uint(uint64_t value, char *out) {
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

size_t cly_format_hex(uint64_t value, char *out) {
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = digits[value & 0xf];
        value >>= 4;
    } while (value != 0);
    out[0] = '0';
    out[1] = 'x';
    for (size_t i = 0; i < n; i++) out[2 + i] = tmp[n - 1 - i];
    return n + 2;
}

/// The separator and the key of a member.
static void begin_member(cly_writer *w, const char *key) {
    if (w->needs_comma) put(w, ',');
    if (key != NULL) {
        put(w, '"');
        put_cstr(w, key);  // keys are our own ASCII constants
        put(w, '"');
        put(w, ':');
    }
}

// An object or array opens with its bracket (its first member needs no comma) and closes with its bracket (what
// follows it does).
static void open_container(cly_writer *w, const char *key, char bracket) {
    begin_member(w, key);
    put(w, bracket);
    w->needs_comma = false;
}

static void close_container(cly_writer *w, char bracket) {
    put(w, bracket);
    w->needs_comma = true;
}

void cly_writer_begin_object(cly_writer *w, const char *key) { open_container(w, key, '{'); }

void cly_writer_end_object(cly_writer *w) { close_container(w, '}'); }

void cly_writer_begin_array(cly_writer *w, const char *key) { open_container(w, key, '['); }

void cly_writer_end_array(cly_writer *w) { close_container(w, ']'); }

static void put_escaped_control(cly_writer *w, unsigned char c) {
    static const char digits[] = "0123456789abcdef";
    switch (c) {
    case '\n': put_cstr(w, "\\n"); return;
    case '\r': put_cstr(w, "\\r"); return;
    case '\t': put_cstr(w, "\\t"); return;
    default:
        put_cstr(w, "\\u00");
        put(w, digits[c >> 4]);
        put(w, digits[c & 0xf]);
    }
}

/// Length of the valid UTF-8 sequence starting at `s` (at most `left` bytes), or 0 when it is invalid
/// (overlong forms, surrogates and values above U+10FFFF are invalid).
static size_t utf8_sequence_length(const unsigned char *s, size_t left) {
    unsigned char c = s[0];
    size_t n;
    uint32_t min;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) { n = 2; min = 0x80; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { n = 3; min = 0x800; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 4; min = 0x10000; cp = c & 0x07; }
    else return 0;
    if (left < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

void cly_writer_string(cly_writer *w, const char *key, const char *value, size_t max_bytes) {
    begin_member(w, key);
    put(w, '"');
    const unsigned char *s = (const unsigned char *)value;
    size_t length = 0;
    while (length < max_bytes && s[length] != 0) length++;
    size_t i = 0;
    while (i < length) {
        unsigned char c = s[i];
        if (c < 0x20 || c == 0x7f) {
            put_escaped_control(w, c);
            i++;
        } else if (c == '"' || c == '\\') {
            put(w, '\\');
            put(w, (char)c);
            i++;
        } else if (c < 0x80) {
            put(w, (char)c);
            i++;
        } else {
            size_t n = utf8_sequence_length(s + i, length - i);
            if (n == 0) {
                put_cstr(w, "\xef\xbf\xbd");  // U+FFFD for one invalid byte
                i++;
            } else {
                cly_writer_raw(w, (const char *)s + i, n);
                i += n;
            }
        }
    }
    put(w, '"');
    w->needs_comma = true;
}

void cly_writer_hex(cly_writer *w, const char *key, uint64_t value) {
    char digits[18];
    begin_member(w, key);
    put(w, '"');
    cly_writer_raw(w, digits, cly_format_hex(value, digits));
    put(w, '"');
    w->needs_comma = true;
}

void cly_writer_uint(cly_writer *w, const char *key, uint64_t value) {
    char digits[20];
    begin_member(w, key);
    cly_writer_raw(w, digits, cly_format_uint(value, digits));
    w->needs_comma = true;
}

void cly_writer_int(cly_writer *w, const char *key, int64_t value) {
    char digits[20];
    begin_member(w, key);
    uint64_t magnitude = (uint64_t)value;
    if (value < 0) {
        put(w, '-');
        magnitude = (uint64_t)0 - magnitude;
    }
    cly_writer_raw(w, digits, cly_format_uint(magnitude, digits));
    w->needs_comma = true;
}

void cly_writer_bool(cly_writer *w, const char *key, bool value) {
    begin_member(w, key);
    put_cstr(w, value ? "true" : "false");
    w->needs_comma = true;
}

void cly_writer_json(cly_writer *w, const char *key, const char *json, size_t length) {
    begin_member(w, key);
    cly_writer_raw(w, json, length);
    w->needs_comma = true;
}
