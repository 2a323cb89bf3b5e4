#include "cly_crypto.h"

#include <openssl/evp.h>
#include <string.h>

#include "cly_library_loader.h"

enum {
    DIGEST, SHA512, SHA1, SHA256, CONTEXT_NEW, CONTEXT_FREE, DIGEST_INIT, DIGEST_UPDATE, DIGEST_FINAL, MD_FETCH,
    MD_FREE, SYMBOL_COUNT
};
static const char *const names[SYMBOL_COUNT] = {
    "EVP_Digest",      "EVP_sha512",      "EVP_sha1",         "EVP_sha256",         "EVP_MD_CTX_new",
    "EVP_MD_CTX_free", "EVP_DigestInit_ex", "EVP_DigestUpdate", "EVP_DigestFinal_ex", "EVP_MD_fetch",
    "EVP_MD_free",
};
static void *slots[SYMBOL_COUNT];
static struct cly_library crypto = {"libcrypto.so.3", names, slots, SYMBOL_COUNT, NULL};

static int ready(void) { return cly_library_ready(&crypto); }

const char *cly_crypto_load_error(void) { return ready() ? NULL : crypto.error; }

/// `EVP_Digest` with the message digest `EVP_<name>()` in slot `algorithm`; 1 when it wrote `expected` bytes.
static int digest_with(int algorithm, const void *data, size_t size, unsigned char *digest, unsigned int expected) {
    if (!ready()) return 0;
    typedef int (*digest_function)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
    unsigned int length = 0;
    const EVP_MD *md = ((const EVP_MD *(*)(void))slots[algorithm])();
    return ((digest_function)slots[DIGEST])(data, size, digest, &length, md, NULL) == 1 && length == expected;
}

int cly_crypto_sha512(const void *data, size_t size, unsigned char digest[64]) {
    return digest_with(SHA512, data, size, digest, 64);
}

int cly_crypto_sha1(const void *data, size_t size, unsigned char digest[20]) {
    return digest_with(SHA1, data, size, digest, 20);
}

/// The implementation of the digest in slot `algorithm` named `name`, fetched from the default provider once and
/// kept: `EVP_DigestInit_ex` with `EVP_sha256()` and the like looks the implementation up again on every call
/// (OpenSSL 3's implicit fetch: several microseconds, more than hashing a few hundred bytes). When the fetch
/// fails, the implicit one.
static const EVP_MD *message_digest(int algorithm, const char *name) {
    static const EVP_MD *fetched[SYMBOL_COUNT];
    const EVP_MD *md = __atomic_load_n(&fetched[algorithm], __ATOMIC_ACQUIRE);
    if (md) return md;
    EVP_MD *found = ((EVP_MD * (*)(OSSL_LIB_CTX *, const char *, const char *)) slots[MD_FETCH])(NULL, name, NULL);
    if (!found) return ((const EVP_MD *(*)(void))slots[algorithm])();
    const EVP_MD *expected = NULL;
    if (__atomic_compare_exchange_n(&fetched[algorithm], &expected, found, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        return found;
    }
    ((void (*)(EVP_MD *))slots[MD_FREE])(found);  // another thread kept its own first
    return expected;
}

void *cly_crypto_digest_begin(int algorithm) {
    int slot;
    const char *name;
    switch (algorithm) {
    case CLY_DIGEST_SHA1: slot = SHA1, name = "SHA1"; break;
    case CLY_DIGEST_SHA256: slot = SHA256, name = "SHA256"; break;
    case CLY_DIGEST_SHA512: slot = SHA512, name = "SHA512"; break;
    default: return NULL;
    }
    if (!ready()) return NULL;
    EVP_MD_CTX *context = ((EVP_MD_CTX * (*)(void)) slots[CONTEXT_NEW])();
    if (!context) return NULL;
    const EVP_MD *md = message_digest(slot, name);
    if (((int (*)(EVP_MD_CTX *, const EVP_MD *, ENGINE *))slots[DIGEST_INIT])(context, md, NULL) != 1) {
        ((void (*)(EVP_MD_CTX *))slots[CONTEXT_FREE])(context);
        return NULL;
    }
    return context;
}

int cly_crypto_digest_update(void *context, const void *data, size_t size) {
    if (!context) return 0;
    return ((int (*)(EVP_MD_CTX *, const void *, size_t))slots[DIGEST_UPDATE])(context, data, size) == 1;
}

int cly_crypto_digest_end(void *context, unsigned char *digest, size_t size) {
    if (!context) return 0;
    int done = 0;
    if (digest) {
        // Written to a buffer of the largest size first: `digest` may be shorter than the algorithm's output.
        unsigned char out[EVP_MAX_MD_SIZE];
        unsigned int length = 0;
        done = ((int (*)(EVP_MD_CTX *, unsigned char *, unsigned int *))slots[DIGEST_FINAL])(context, out, &length)
                   == 1
               && length == size;
        if (done) memcpy(digest, out, size);
    }
    ((void (*)(EVP_MD_CTX *))slots[CONTEXT_FREE])(context);
    return done;
}
