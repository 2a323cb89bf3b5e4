#include "cly_zstd.h"

#include <pthread.h>
#include <stdlib.h>

#include "cly_library_loader.h"

// The libzstd functions used, each listed once: its slot in `slots` and its name.
#define ZSTD_FUNCTIONS(X)                                                                                             \
    X(COMPRESS_BOUND, "ZSTD_compressBound")                                                                           \
    X(COMPRESS, "ZSTD_compress")                                                                                      \
    X(IS_ERROR, "ZSTD_isError")                                                                                       \
    X(GET_ERROR_NAME, "ZSTD_getErrorName")                                                                            \
    X(GET_FRAME_CONTENT_SIZE, "ZSTD_getFrameContentSize")                                                             \
    X(DECOMPRESS, "ZSTD_decompress")                                                                                  \
    X(CREATE_CCTX, "ZSTD_createCCtx")                                                                                 \
    X(FREE_CCTX, "ZSTD_freeCCtx")                                                                                     \
    X(COMPRESS_CCTX, "ZSTD_compressCCtx")                                                                             \
    X(CREATE_DCTX, "ZSTD_createDCtx")                                                                                 \
    X(FREE_DCTX, "ZSTD_freeDCtx")                                                                                     \
    X(DECOMPRESS_DCTX, "ZSTD_decompressDCtx")
#define ZSTD_SLOT(slot, name) slot,
#define ZSTD_NAME(slot, name) name,
enum { ZSTD_FUNCTIONS(ZSTD_SLOT) SYMBOL_COUNT };
static const char *const names[SYMBOL_COUNT] = {ZSTD_FUNCTIONS(ZSTD_NAME)};
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

/// Per thread: a compression and a decompression context, made on first use and freed when the thread ends. A
/// context holds zstd's tables and buffers: making one per call (what ZSTD_compress and ZSTD_decompress do) was
/// a fifth of the time of compressing a symbol cache's small name blocks.
struct contexts {
    void *compress;
    void *decompress;
};
static pthread_key_t contexts_key;
static int contexts_key_made;
static pthread_once_t contexts_key_once = PTHREAD_ONCE_INIT;

static void free_contexts(void *value) {
    struct contexts *contexts = value;
    if (contexts->compress != NULL) ((size_t (*)(void *))slots[FREE_CCTX])(contexts->compress);
    if (contexts->decompress != NULL) ((size_t (*)(void *))slots[FREE_DCTX])(contexts->decompress);
    free(contexts);
}

static void make_contexts_key(void) { contexts_key_made = pthread_key_create(&contexts_key, free_contexts) == 0; }

/// This thread's contexts (NULL without memory or a thread key); its fields are made by the callers.
static struct contexts *thread_contexts(void) {
    pthread_once(&contexts_key_once, make_contexts_key);
    if (!contexts_key_made) return NULL;
    struct contexts *contexts = pthread_getspecific(contexts_key);
    if (contexts != NULL) return contexts;
    contexts = calloc(1, sizeof *contexts);
    if (contexts == NULL) return NULL;
    if (pthread_setspecific(contexts_key, contexts) != 0) {
        free(contexts);
        return NULL;
    }
    return contexts;
}

size_t cly_zstd_compress_reusing(void *destination, size_t capacity, const void *source, size_t size, int level,
                                 const char **error) {
    if (!ready()) {
        *error = zstd.error;
        return 0;
    }
    struct contexts *contexts = thread_contexts();
    if (contexts != NULL && contexts->compress == NULL) contexts->compress = ((void *(*)(void))slots[CREATE_CCTX])();
    if (contexts == NULL || contexts->compress == NULL)
        return cly_zstd_compress(destination, capacity, source, size, level, error);
    typedef size_t (*compress_function)(void *, void *, size_t, const void *, size_t, int);
    return checked(
        ((compress_function)slots[COMPRESS_CCTX])(contexts->compress, destination, capacity, source, size, level),
        error);
}

size_t cly_zstd_decompress_reusing(void *destination, size_t capacity, const void *source, size_t size,
                                   const char **error) {
    if (!ready()) {
        *error = zstd.error;
        return 0;
    }
    struct contexts *contexts = thread_contexts();
    if (contexts != NULL && contexts->decompress == NULL)
        contexts->decompress = ((void *(*)(void))slots[CREATE_DCTX])();
    if (contexts == NULL || contexts->decompress == NULL)
        return cly_zstd_decompress(destination, capacity, source, size, error);
    typedef size_t (*decompress_function)(void *, void *, size_t, const void *, size_t);
    return checked(
        ((decompress_function)slots[DECOMPRESS_DCTX])(contexts->decompress, destination, capacity, source, size),
        error);
}
