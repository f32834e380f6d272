/*
 * Shared declarations of the sealpipe native library.
 *
 * No OpenSSL headers are used: libcrypto is opened at run time (openssl_loader.c) and the few
 * EVP/HMAC/ERR functions we call are declared here as function-pointer types, with the
 * constants we need. Every type is opaque to us; only pointers cross the boundary.
 */
#ifndef SEALPIPE_H
#define SEALPIPE_H

#include <jni.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Constants shared with Java (NativeCrypto.java); checked by checkConstants at load. ---- */
#define SP_AES_CTR 1
#define SP_AES_GCM 2
#define SP_AES_CFB128 3
#define SP_GCM_NONCE_LENGTH 12
#define SP_GCM_TAG_LENGTH 16
#define SP_AES_BLOCK 16
#define SP_HMAC_SHA256_LENGTH 32
#define SP_CHUNK_SIZE 16384 /* c2sp.org/chunked-encryption: plaintext bytes per full chunk */
#define SP_SMALL_CALL 512   /* the most bytes cipherUpdateSmall takes: it copies through the stack */

/*
 * CPU feature bits returned by cpuFeatures() (cpu.c). The first two mean the same on both
 * architectures, named for x86: hardware AES and carry-less multiply. On aarch64 they come from
 * AT_HWCAP: SP_CPU_AESNI is HWCAP_AES and SP_CPU_PCLMULQDQ is HWCAP_PMULL (the ARMv8
 * Cryptography Extensions); the x86-only bits stay clear there.
 */
#define SP_CPU_AESNI      (1 << 0) /* x86: AES-NI; aarch64: AES */
#define SP_CPU_PCLMULQDQ  (1 << 1) /* x86: PCLMULQDQ; aarch64: PMULL */
#define SP_CPU_AVX2       (1 << 2)
#define SP_CPU_VAES       (1 << 3)
#define SP_CPU_VPCLMULQDQ (1 << 4)
#define SP_CPU_AVX512     (1 << 5) /* AVX512F, DQ, BW and VL: what HotSpot's AES intrinsics use */
#define SP_CPU_KNOWN      (1 << 30) /* set when the features could be read (cpuid, AT_HWCAP) */

/* ---- OpenSSL constants (stable across 1.1 and 3.x). ---- */
#define OSSL_EVP_CTRL_GCM_SET_IVLEN 0x9
#define OSSL_EVP_CTRL_GCM_GET_TAG 0x10
#define OSSL_EVP_CTRL_GCM_SET_TAG 0x11
#define OSSL_OPENSSL_VERSION 0

typedef struct evp_cipher_st EVP_CIPHER;
typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;
typedef struct evp_md_st EVP_MD;
typedef struct hmac_ctx_st HMAC_CTX;
typedef struct ossl_lib_ctx_st OSSL_LIB_CTX;
typedef struct engine_st ENGINE;

/* The libcrypto functions we call, resolved with dlsym. */
struct libcrypto {
    void *handle;
    int is_v3;                 /* EVP_CIPHER_fetch exists: OpenSSL 3.x */
    char path[1024];
    const char *(*OpenSSL_version)(int type);
    unsigned long (*OpenSSL_version_num)(void);
    EVP_CIPHER_CTX *(*EVP_CIPHER_CTX_new)(void);
    void (*EVP_CIPHER_CTX_free)(EVP_CIPHER_CTX *ctx);
    int (*EVP_CipherInit_ex)(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl,
                             const unsigned char *key, const unsigned char *iv, int enc);
    int (*EVP_CipherUpdate)(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl,
                            const unsigned char *in, int inl);
    int (*EVP_CipherFinal_ex)(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl);
    int (*EVP_CIPHER_CTX_ctrl)(EVP_CIPHER_CTX *ctx, int type, int arg, void *ptr);
    EVP_CIPHER *(*EVP_CIPHER_fetch)(OSSL_LIB_CTX *libctx, const char *algorithm,
                                    const char *properties);           /* 3.x only */
    const EVP_MD *(*EVP_sha256)(void);
    HMAC_CTX *(*HMAC_CTX_new)(void);
    void (*HMAC_CTX_free)(HMAC_CTX *ctx);
    int (*HMAC_Init_ex)(HMAC_CTX *ctx, const void *key, int len, const EVP_MD *md, ENGINE *impl);
    int (*HMAC_Update)(HMAC_CTX *ctx, const unsigned char *data, size_t len);
    int (*HMAC_Final)(HMAC_CTX *ctx, unsigned char *md, unsigned int *len);
    unsigned long (*ERR_get_error)(void);
    void (*ERR_error_string_n)(unsigned long e, char *buf, size_t len);
    void (*ERR_clear_error)(void);
    void (*OPENSSL_cleanse)(void *ptr, size_t len);
    /* EVP_CIPHERs by [mode 1..3][key size index 0..2 for 128/192/256], fetched once. */
    const EVP_CIPHER *ciphers[4][3];
};

/* The loaded libcrypto, or NULL before loadLibcrypto succeeded. */
extern struct libcrypto *sp_crypto;

/* openssl_loader.c */
jboolean sp_load_libcrypto(JNIEnv *env, jstring path);
const EVP_CIPHER *sp_cipher(int mode, int key_length);

/* errors.c: every throw goes through these; none overwrites a pending exception. */
void sp_throw(JNIEnv *env, const char *class_name, const char *message);
void sp_throw_openssl(JNIEnv *env, const char *class_name, const char *what);
int sp_require_crypto(JNIEnv *env);

/* buffers.c: a byte[] or a direct ByteBuffer, validated and pinned for one call. */
struct sp_buffer {
    jobject obj;
    jbyteArray array;          /* non-NULL for byte[] (pinned with GetPrimitiveArrayCritical) */
    unsigned char *base;       /* start of the pinned array or of the direct buffer */
    jint offset;
    jint length;
    jboolean is_copy;          /* the JVM handed out a copy of the array instead of pinning it */
};
int sp_buffer_check(JNIEnv *env, struct sp_buffer *b, jobject obj, jint offset, jint length,
                    const char *name);
/* sp_buffer_check, and a direct buffer must not be read-only. */
int sp_buffer_check_writable(JNIEnv *env, struct sp_buffer *b, jobject obj, jint offset,
                             jint length, const char *name);
/* Whether two checked ranges share memory: not at all, from the same byte (in place), or partly. */
enum sp_overlap { SP_DISJOINT, SP_SAME_START, SP_PARTIAL };
enum sp_overlap sp_buffers_overlap(JNIEnv *env, const struct sp_buffer *a,
                                   const struct sp_buffer *b);
int sp_buffer_pin(JNIEnv *env, struct sp_buffer *b);
void sp_buffer_unpin(JNIEnv *env, struct sp_buffer *b, jint mode);
/* Unpins an output, writing back only its range; last of a call's unpins. 0: exception pending. */
int sp_buffer_unpin_output(JNIEnv *env, struct sp_buffer *b);
int sp_key_copy(JNIEnv *env, jbyteArray key, unsigned char *out, int *out_length);
void sp_cleanse(void *p, size_t n);

/* cipher.c: one EVP_CIPHER_CTX per Java cipher object, reused for every call. */
struct sp_cipher {
    uint32_t magic;
    int mode;
    EVP_CIPHER_CTX *ctx;
};
/*
 * The cipher behind a handle, of `mode` unless 0; NULL with an exception for a null handle or
 * one of another kind. A freed handle is not detected: the Java owners never pass one.
 */
struct sp_cipher *sp_cipher_from_handle(JNIEnv *env, jlong handle, int mode);
/* Copies a byte[] of exactly `expected` bytes into out; NULL or another length throws. */
int sp_copy_fixed(JNIEnv *env, jbyteArray array, unsigned char *out, jsize expected,
                  const char *name);

/* Registration of each concern's native methods (one table per file). */
int sp_register_cipher(JNIEnv *env, jclass bridge);
int sp_register_hmac(JNIEnv *env, jclass bridge);
int sp_register_chunks(JNIEnv *env, jclass bridge);
int sp_register_library(JNIEnv *env, jclass bridge);
int sp_register_buffers(JNIEnv *env, jclass bridge);
int sp_init_buffers(JNIEnv *env);

/* cpu.c */
jint sp_cpu_features(void);

#define SP_BRIDGE_CLASS "io/sealpipe/engine/openssl/NativeCrypto"

#endif
