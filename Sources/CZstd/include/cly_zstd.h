// libzstd for Swift, loaded on first use (see cly_library_loader.h): the PostHog symbol-set payload, zstd debug
// sections and a symbol cache's name blocks are zstd-compressed. <zstd.h> (Debian libzstd-dev) is included for its
// constants only; the library is not linked, so a run that never meets zstd data never maps it.
#ifndef CLY_ZSTD_H
#define CLY_ZSTD_H

#include <stddef.h>
#include <zstd.h>

/// NULL once libzstd is loaded, else why it cannot be.
const char *cly_zstd_load_error(void);

/// `ZSTD_compressBound(size)`: the largest size one frame of `size` bytes can take (0 when libzstd is missing).
size_t cly_zstd_compress_bound(size_t size);

/// Compresses `size` bytes at `source` into one frame at `level`, its content size in the frame header
/// (`ZSTD_compress`). Returns the frame's size, or 0 with the reason in `*error` (zstd's, or the load error).
size_t cly_zstd_compress(void *destination, size_t capacity, const void *source, size_t size, int level,
                         const char **error);

/// The content size a frame's header declares (`ZSTD_getFrameContentSize`): ZSTD_CONTENTSIZE_UNKNOWN or
/// ZSTD_CONTENTSIZE_ERROR when it has none or is not a frame (or libzstd is missing).
unsigned long long cly_zstd_frame_content_size(const void *source, size_t size);

/// Decompresses `size` bytes of frames (`ZSTD_decompress`). Returns the decompressed size, or 0 with the reason
/// in `*error`.
size_t cly_zstd_decompress(void *destination, size_t capacity, const void *source, size_t size,
                           const char **error);

/// `cly_zstd_compress` with this thread's compression context, made on first use and kept until the thread ends
/// (for many small inputs: making a context per call costs as much as compressing a few kilobytes).
size_t cly_zstd_compress_reusing(void *destination, size_t capacity, const void *source, size_t size, int level,
                                 const char **error);

/// `cly_zstd_decompress` with this thread's decompression context (as `cly_zstd_compress_reusing`).
size_t cly_zstd_decompress_reusing(void *destination, size_t capacity, const void *source, size_t size,
                                   const char **error);

#endif
