/*
 * Benchmark-only shim: lets Apache Commons Crypto 1.2.0's OpenSSL cipher load on OpenSSL 3.
 *
 * Commons Crypto 1.2.0 (libcommons-crypto.so, built January 2023) looks up
 * EVP_CIPHER_CTX_block_size and EVP_CIPHER_flags with dlsym. OpenSSL 3.0 renamed both
 * (EVP_CIPHER_CTX_get_block_size, EVP_CIPHER_get_flags) and keeps the old names only as
 * macros in <openssl/evp.h>, so libcrypto.so.3 does not export them and
 * OpenSslNative.initIDs throws UnsatisfiedLinkError: Commons Crypto then falls back to JCE.
 * These two functions forward the old names to the new ones. See docs/PERFORMANCE.md
 * ("CTR streams") for how the benchmark JVM is made to find them; never part of sealpipe.
 */
/*
 * No OpenSSL headers needed (so no libssl-dev): the types are opaque here, and the two new
 * functions are declared as OpenSSL 3.0's <openssl/evp.h> declares them.
 */
typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;
typedef struct evp_cipher_st EVP_CIPHER;
int EVP_CIPHER_CTX_get_block_size(const EVP_CIPHER_CTX *ctx);
unsigned long EVP_CIPHER_get_flags(const EVP_CIPHER *cipher);

#define SHIM_EXPORT __attribute__((visibility("default")))

SHIM_EXPORT int EVP_CIPHER_CTX_block_size(const EVP_CIPHER_CTX *ctx);
SHIM_EXPORT unsigned long EVP_CIPHER_flags(const EVP_CIPHER *cipher);

int EVP_CIPHER_CTX_block_size(const EVP_CIPHER_CTX *ctx) {
    return EVP_CIPHER_CTX_get_block_size(ctx);
}

unsigned long EVP_CIPHER_flags(const EVP_CIPHER *cipher) {
    return EVP_CIPHER_get_flags(cipher);
}
