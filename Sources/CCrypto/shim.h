// OpenSSL's libcrypto for Swift (Debian libssl-dev): SHA-512 through the EVP digest API.
#include <openssl/evp.h>
