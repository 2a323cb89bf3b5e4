// OpenSSL's libcrypto for Swift, loaded on first use (see cly_library_loader.h): SHA-512 for the PostHog
// symbol-set content hash. <openssl/evp.h> (Debian libssl-dev) is included for its types only; libcrypto is not
// linked, so a CLI run that never hashes never maps it (it is part of the TLS stack kept out of start-up).
#ifndef CLY_CRYPTO_H
#define CLY_CRYPTO_H

#include <stddef.h>

/// NULL once libcrypto is loaded, else why it cannot be.
const char *cly_crypto_load_error(void);

/// SHA-512 of `size` bytes at `data` into `digest` (64 bytes), through `EVP_Digest` with `EVP_sha512()`.
/// Returns 1 on success, 0 when libcrypto is missing or the digest failed.
int cly_crypto_sha512(const void *data, size_t size, unsigned char digest[64]);

/// SHA-1 of `size` bytes at `data` into `digest` (20 bytes), through `EVP_Digest` with `EVP_sha1()`: the
/// feature-flag bucketing hash (cohorly-api.md §5). Returns 1 on success, 0 when libcrypto is missing.
int cly_crypto_sha1(const void *data, size_t size, unsigned char digest[20]);

#endif
