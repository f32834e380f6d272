/*
 * Full chunks of c2sp.org/chunked-encryption, many per call: each 16 KiB chunk is sealed or
 * opened with AES-GCM on the cipher's reused context (the key schedule stays; only the nonce
 * changes), with nonce = base nonce XOR the chunk index as a big-endian integer and no AAD.
 * The short final chunk goes through gcmSeal/gcmOpen in cipher.c.
 */
#include <stdio.h>
#include <string.h>

#include "sealpipe.h"

#define SEALED_CHUNK (SP_CHUNK_SIZE + SP_GCM_TAG_LENGTH)
#define MAX_CHUNKS (1LL << 38) /* the format's limit on chunk indices */

enum chunk_status { CHUNK_OK, CHUNK_FAILED, CHUNK_BAD_TAG };

static void chunk_nonce(const unsigned char *base, uint64_t index, unsigned char *nonce) {
    memcpy(nonce, base, SP_GCM_NONCE_LENGTH);
    for (int i = 0; i < 8; i++) {
        nonce[SP_GCM_NONCE_LENGTH - 1 - i] ^= (unsigned char)(index >> (8 * i));
    }
}

/* Seals 16384 bytes of `in` into 16400 bytes of `out` (ciphertext, then tag). */
static enum chunk_status seal_chunk(EVP_CIPHER_CTX *ctx, const unsigned char *nonce,
                                    const unsigned char *in, unsigned char *out) {
    int outl = 0, finl = 0;
    if (!sp_crypto->EVP_CipherInit_ex(ctx, NULL, NULL, NULL, nonce, 1) ||
        !sp_crypto->EVP_CipherUpdate(ctx, out, &outl, in, SP_CHUNK_SIZE) || outl != SP_CHUNK_SIZE ||
        !sp_crypto->EVP_CipherFinal_ex(ctx, out + outl, &finl) ||
        !sp_crypto->EVP_CIPHER_CTX_ctrl(ctx, OSSL_EVP_CTRL_GCM_GET_TAG, SP_GCM_TAG_LENGTH,
                                        out + SP_CHUNK_SIZE)) {
        return CHUNK_FAILED;
    }
    return CHUNK_OK;
}

/* Opens 16400 bytes of `in` into 16384 bytes of `out`; wipes `out` when the tag is wrong. */
static enum chunk_status open_chunk(EVP_CIPHER_CTX *ctx, const unsigned char *nonce,
                                    const unsigned char *in, unsigned char *out) {
    unsigned char tag[SP_GCM_TAG_LENGTH];
    int outl = 0, finl = 0;
    /*
     * The tag is read after the data: in and out never overlap here (checked), and reading the
     * chunk front to back lets the hardware prefetcher stream it; touching the tag first costs a
     * cache miss out of order on data that is not cached yet.
     */
    if (!sp_crypto->EVP_CipherInit_ex(ctx, NULL, NULL, NULL, nonce, 0) ||
        !sp_crypto->EVP_CipherUpdate(ctx, out, &outl, in, SP_CHUNK_SIZE) || outl != SP_CHUNK_SIZE) {
        memset(out, 0, SP_CHUNK_SIZE);
        return CHUNK_FAILED;
    }
    memcpy(tag, in + SP_CHUNK_SIZE, SP_GCM_TAG_LENGTH);
    if (!sp_crypto->EVP_CIPHER_CTX_ctrl(ctx, OSSL_EVP_CTRL_GCM_SET_TAG, SP_GCM_TAG_LENGTH, tag)) {
        memset(out, 0, SP_CHUNK_SIZE);
        return CHUNK_FAILED;
    }
    if (!sp_crypto->EVP_CipherFinal_ex(ctx, out + outl, &finl)) {
        memset(out, 0, SP_CHUNK_SIZE); /* release nothing unauthenticated */
        return CHUNK_BAD_TAG;
    }
    return CHUNK_OK;
}

/*
 * Checks the arguments shared by both directions: a GCM handle, a 12-byte base nonce, a chunk
 * range below the format's limit, and input/output ranges that fit and do not overlap.
 */
static struct sp_cipher *check_chunks(JNIEnv *env, jlong handle, jbyteArray jbase,
                                      unsigned char *base, jlong first, jint count,
                                      struct sp_buffer *in, jobject jin, jint in_off, jint in_size,
                                      struct sp_buffer *out, jobject jout, jint out_off,
                                      jint out_size) {
    char message[160];
    struct sp_cipher *c = sp_cipher_from_handle(env, handle, SP_AES_GCM);
    if (c == NULL || !sp_copy_fixed(env, jbase, base, SP_GCM_NONCE_LENGTH, "base nonce")) {
        return NULL;
    }
    if (count < 0 || count > 0x7fffffff / SEALED_CHUNK) {
        snprintf(message, sizeof(message), "chunk count must be 0..%d, not %d",
                 0x7fffffff / SEALED_CHUNK, (int)count);
        sp_throw(env, "java/lang/IllegalArgumentException", message);
        return NULL;
    }
    if (first < 0 || first > MAX_CHUNKS - count) {
        /* No arithmetic on `first` here: it may be near LLONG_MAX. */
        snprintf(message, sizeof(message),
                 "first chunk %lld with chunk count %d is outside 0..2^38-1, the format's limit",
                 (long long)first, (int)count);
        sp_throw(env, "java/lang/IllegalArgumentException", message);
        return NULL;
    }
    /* count * SEALED_CHUNK fits in an int: count was checked above. */
    if (!sp_buffer_check(env, in, jin, in_off, count * in_size, "input") ||
        !sp_buffer_check_writable(env, out, jout, out_off, count * out_size, "output")) {
        return NULL;
    }
    enum sp_overlap overlap = sp_buffers_overlap(env, in, out);
    if ((*env)->ExceptionCheck(env)) {
        return NULL;
    }
    if (overlap != SP_DISJOINT) {
        sp_throw(env, "java/lang/IllegalArgumentException",
                 "input and output overlap: chunks are never opened or sealed in place");
        return NULL;
    }
    return c;
}

static jint JNICALL gcmSealChunks(JNIEnv *env, jclass cls, jlong handle, jbyteArray jbase,
                                  jlong first, jobject jin, jint in_off, jint count, jobject jout,
                                  jint out_off) {
    (void)cls;
    unsigned char base[SP_GCM_NONCE_LENGTH], nonce[SP_GCM_NONCE_LENGTH];
    struct sp_buffer in, out;
    struct sp_cipher *c = check_chunks(env, handle, jbase, base, first, count, &in, jin, in_off,
                                       SP_CHUNK_SIZE, &out, jout, out_off, SEALED_CHUNK);
    if (c == NULL) {
        return -1;
    }
    /* No JNI call may happen while arrays are pinned: record the outcome, unpin, then throw. */
    enum chunk_status status = CHUNK_OK;
    int pinned = sp_buffer_pin(env, &in) && sp_buffer_pin(env, &out);
    for (jint i = 0; pinned && i < count && status == CHUNK_OK; i++) {
        chunk_nonce(base, (uint64_t)first + (uint64_t)i, nonce);
        status = seal_chunk(c->ctx, nonce, in.base + in_off + (size_t)i * SP_CHUNK_SIZE,
                            out.base + out_off + (size_t)i * SEALED_CHUNK);
    }
    sp_buffer_unpin(env, &in, JNI_ABORT);
    int copied_back = sp_buffer_unpin_output(env, &out);
    sp_cleanse(base, sizeof(base));
    sp_cleanse(nonce, sizeof(nonce));
    if (!copied_back) {
        return -1;
    }
    if (!pinned) {
        sp_throw(env, "java/lang/OutOfMemoryError", "pinning a byte[] failed");
        return -1;
    }
    if (status != CHUNK_OK) {
        sp_throw_openssl(env, "java/lang/IllegalStateException", "AES-GCM chunk seal failed");
        return -1;
    }
    return count;
}

/*
 * Returns how many chunks opened and authenticated, from the first: `count` when all did.
 * When chunk `first + k` fails its tag, the call stops there, returns k and leaves that
 * chunk's output zeroed; the k chunks before it are authenticated plaintext.
 */
static jint JNICALL gcmOpenChunks(JNIEnv *env, jclass cls, jlong handle, jbyteArray jbase,
                                  jlong first, jobject jin, jint in_off, jint count, jobject jout,
                                  jint out_off) {
    (void)cls;
    unsigned char base[SP_GCM_NONCE_LENGTH], nonce[SP_GCM_NONCE_LENGTH];
    struct sp_buffer in, out;
    struct sp_cipher *c = check_chunks(env, handle, jbase, base, first, count, &in, jin, in_off,
                                       SEALED_CHUNK, &out, jout, out_off, SP_CHUNK_SIZE);
    if (c == NULL) {
        return -1;
    }
    enum chunk_status status = CHUNK_OK;
    jint opened = 0;
    int pinned = sp_buffer_pin(env, &in) && sp_buffer_pin(env, &out);
    for (; pinned && opened < count; opened++) {
        chunk_nonce(base, (uint64_t)first + (uint64_t)opened, nonce);
        status = open_chunk(c->ctx, nonce, in.base + in_off + (size_t)opened * SEALED_CHUNK,
                            out.base + out_off + (size_t)opened * SP_CHUNK_SIZE);
        if (status != CHUNK_OK) {
            break;
        }
    }
    sp_buffer_unpin(env, &in, JNI_ABORT);
    int copied_back = sp_buffer_unpin_output(env, &out);
    sp_cleanse(base, sizeof(base));
    sp_cleanse(nonce, sizeof(nonce));
    if (!copied_back) {
        return -1;
    }
    if (!pinned) {
        sp_throw(env, "java/lang/OutOfMemoryError", "pinning a byte[] failed");
        return -1;
    }
    if (status == CHUNK_FAILED) {
        sp_throw_openssl(env, "java/lang/IllegalStateException", "AES-GCM chunk open failed");
        return -1;
    }
    if (status == CHUNK_BAD_TAG && sp_crypto->ERR_clear_error != NULL) {
        sp_crypto->ERR_clear_error(); /* a bad tag is an answer here, not an error to report */
    }
    return opened;
}

static const JNINativeMethod methods[] = {
    {"gcmSealChunks", "(J[BJLjava/lang/Object;IILjava/lang/Object;I)I", (void *)gcmSealChunks},
    {"gcmOpenChunks", "(J[BJLjava/lang/Object;IILjava/lang/Object;I)I", (void *)gcmOpenChunks},
};

int sp_register_chunks(JNIEnv *env, jclass bridge) {
    return (*env)->RegisterNatives(env, bridge, methods, sizeof(methods) / sizeof(methods[0])) == 0;
}
