#include "cly_crypto.h"

#include <openssl/evp.h>

#include "cly_library_loader.h"

enum { DIGEST, SHA512, SHA1, SYMBOL_COUNT };
static const char *const names[SYMBOL_COUNT] = {"EVP_Digest", "EVP_sha512", "EVP_sha1"};
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
