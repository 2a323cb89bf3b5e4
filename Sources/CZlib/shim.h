// zlib for Swift. `deflateInit` / `inflateInit2` are macros (they pass the library version and the stream
// size), so each gets one static inline wrapper here.
#include <zlib.h>

/// Starts a zlib-format (RFC 1950) deflate stream at `level` (0-9, or Z_DEFAULT_COMPRESSION).
static inline int cly_deflate_init(z_stream *stream, int level) {
    return deflateInit(stream, level);
}

/// Starts a raw deflate stream (RFC 1951, no header or trailer: a ZIP entry's data) at `level`.
static inline int cly_deflate_init_raw(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

/// Starts a gzip-format (RFC 1952) deflate stream at `level` (request bodies sent with `Content-Encoding: gzip`).
static inline int cly_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/// Starts an inflate stream that accepts both zlib (RFC 1950) and gzip (RFC 1952) headers.
static inline int cly_inflate_init_auto(z_stream *stream) {
    return inflateInit2(stream, 15 + 32);
}

/// Starts a raw inflate stream (RFC 1951, no header or trailer: the caller skips them).
static inline int cly_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -15);
}
