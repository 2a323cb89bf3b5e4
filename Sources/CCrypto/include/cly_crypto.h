// OpenSSL's libcrypto for Swift, loaded on first use (see cly_library_loader.h): SHA-512 for the PostHog
// symbol-set content hash, SHA-1 for flag bucketing and Sentry's chunk upload, SHA-256 for debug-file uploads. <openssl/evp.h> (Debian libssl-dev) is included for its types only; libcrypto is not
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

/// The digests `cly_crypto_digest_begin` computes.
enum cly_digest_algorithm { CLY_DIGEST_SHA1 = 1, CLY_DIGEST_SHA256 = 2, CLY_DIGEST_SHA512 = 3 };

/// A digest fed piece by piece (`EVP_MD_CTX_new` + `EVP_DigestInit_ex` with `EVP_sha1()`, `EVP_sha256()` or
/// `EVP_sha512()`): files of any size hashed in bounded memory (Sentry's chunk checksums, debug-file uploads).
/// NULL when libcrypto is missing, the algorithm is unknown or the digest cannot start.
void *cly_crypto_digest_begin(int algorithm);

/// Adds `size` bytes at `data` to `context`. Returns 1 on success.
int cly_crypto_digest_update(void *context, const void *data, size_t size);

/// Writes the digest into `digest` (`size` bytes: the algorithm's length; NULL: none, the digest is abandoned)
/// and frees `context`, which must not be used again. Returns 1 when exactly `size` bytes were written.
int cly_crypto_digest_end(void *context, unsigned char *digest, size_t size);

#endif
