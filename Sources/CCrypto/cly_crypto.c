#include "cly_crypto.h"

#include <openssl/evp.h>

#include "cly_library_loader.h"

enum { DIGEST, SHA512, SHA1, SYMBOL_COUNT };
static const char *const names[SYMBOL_COUNT] = {"EVP_Digest", "EVP_sha512", "EVP_sha1"};
static void *slots[SYMBOL_COUNT];
static struct cly_library crypto = {"libcrypto.so.3", names, slots, SYMBOL_COUNT, NULL};

static int ready(void) { return cly_library_ready(&crypto); }

const char *cly_crypto_load_error(void) { return ready() ? NULL : crypto.error; }

int cly_crypto_sha512(const void *data, size_t size, unsigned char digest[64]) {
    if (!ready()) return 0;
    typedef int (*digest_function)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
    unsigned int length = 0;
    const EVP_MD *sha512 = ((const EVP_MD *(*)(void))slots[SHA512])();
    return ((digest_function)slots[DIGEST])(data, size, digest, &length, sha512, NULL) == 1 && length == 64;
}

int cly_crypto_sha1(const void *data, size_t size, unsigned char digest[20]) {
    if (!ready()) return 0;
    typedef int (*digest_function)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
    unsigned int length = 0;
    const EVP_MD *sha1 = ((const EVP_MD *(*)(void))slots[SHA1])();
    return ((digest_function)slots[DIGEST])(data, size, digest, &length, sha1, NULL) == 1 && length == 20;
}
