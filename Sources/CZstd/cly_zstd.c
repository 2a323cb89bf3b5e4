#include "cly_zstd.h"

#include "cly_library_loader.h"

enum { COMPRESS_BOUND, COMPRESS, IS_ERROR, GET_ERROR_NAME, GET_FRAME_CONTENT_SIZE, DECOMPRESS, SYMBOL_COUNT };
static const char *const names[SYMBOL_COUNT] = {
    "ZSTD_compressBound", "ZSTD_compress", "ZSTD_isError", "ZSTD_getErrorName", "ZSTD_getFrameContentSize",
    "ZSTD_decompress"};
static void *slots[SYMBOL_COUNT];
static struct cly_library zstd = {"libzstd.so.1", names, slots, SYMBOL_COUNT, NULL};

static int ready(void) { return cly_library_ready(&zstd); }

const char *cly_zstd_load_error(void) { return ready() ? NULL : zstd.error; }

size_t cly_zstd_compress_bound(size_t size) { return ready() ? ((size_t (*)(size_t))slots[COMPRESS_BOUND])(size) : 0; }

/// `result` when zstd says it is not an error code; else 0 with zstd's name for it in `*error`.
static size_t checked(size_t result, const char **error) {
    if (!((unsigned (*)(size_t))slots[IS_ERROR])(result)) return result;
    *error = ((const char *(*)(size_t))slots[GET_ERROR_NAME])(result);
    return 0;
}

size_t cly_zstd_compress(void *destination, size_t capacity, const void *source, size_t size, int level,
                         const char **error) {
    if (!ready()) {
        *error = zstd.error;
        return 0;
    }
    typedef size_t (*compress_function)(void *, size_t, const void *, size_t, int);
    return checked(((compress_function)slots[COMPRESS])(destination, capacity, source, size, level), error);
}

unsigned long long cly_zstd_frame_content_size(const void *source, size_t size) {
    if (!ready()) return ZSTD_CONTENTSIZE_ERROR;
    return ((unsigned long long (*)(const void *, size_t))slots[GET_FRAME_CONTENT_SIZE])(source, size);
}

size_t cly_zstd_decompress(void *destination, size_t capacity, const void *source, size_t size,
                           const char **error) {
    if (!ready()) {
        *error = zstd.error;
        return 0;
    }
    typedef size_t (*decompress_function)(void *, size_t, const void *, size_t);
    return checked(((decompress_function)slots[DECOMPRESS])(destination, capacity, source, size), error);
}
