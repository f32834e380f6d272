/*
 * AES-CTR, AES-CFB128 and AES-GCM on one reusable EVP_CIPHER_CTX per Java cipher object.
 *
 * The key schedule is computed once in cipherNew; a new IV (CTR/CFB) or nonce (GCM) only
 * re-initialises the IV with EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc), which keeps
 * the key: context set-up never runs on the data path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sealpipe.h"

/*
 * Handles are freed exactly once, and never while a call runs on them: the Java owner counts
 * its calls in flight (internal.InFlightCalls) and frees through a Cleanable, which runs once.
 * A freed handle cannot be recognised without reading freed memory, so the magic is no guard
 * against one and the free path does not look at it; it only catches a live handle of the other
 * kind (an HMAC handle passed as a cipher).
 */
#define CIPHER_MAGIC 0x5ea1c1f3u

struct sp_cipher *sp_cipher_from_handle(JNIEnv *env, jlong handle, int mode) {
    struct sp_cipher *c = (struct sp_cipher *)(intptr_t)handle;
    if (c == NULL) {
        sp_throw(env, "java/lang/IllegalStateException", "cipher handle is null");
        return NULL;
    }
    if (c->magic != CIPHER_MAGIC) {
        sp_throw(env, "java/lang/IllegalArgumentException", "handle is not a cipher handle");
        return NULL;
    }
    if (mode != 0 && c->mode != mode) {
        sp_throw(env, "java/lang/IllegalArgumentException", "cipher handle has another mode");
        return NULL;
    }
    return c;
}

/* Copies a byte[] of exactly `expected` bytes into out; throws naming the value otherwise. */
int sp_copy_fixed(JNIEnv *env, jbyteArray array, unsigned char *out, jsize expected,
                      const char *name) {
    char message[96];
    if (array == NULL) {
        snprintf(message, sizeof(message), "%s is null", name);
        sp_throw(env, "java/lang/NullPointerException", message);
        return 0;
    }
    jsize n = (*env)->GetArrayLength(env, array);
    if (n != expected) {
        snprintf(message, sizeof(message), "%s must be %d bytes, not %d", name, (int)expected, (int)n);
        sp_throw(env, "java/security/InvalidAlgorithmParameterException", message);
        return 0;
    }
    (*env)->GetByteArrayRegion(env, array, 0, n, (jbyte *)out);
    return !(*env)->ExceptionCheck(env);
}

static jlong JNICALL cipherNew(JNIEnv *env, jclass cls, jint mode, jbyteArray jkey, jbyteArray jiv,
                               jboolean encrypt) {
    (void)cls;
    unsigned char key[32];
    unsigned char iv[SP_AES_BLOCK];
    int key_length = 0;
    struct sp_cipher *c = NULL;
    jlong result = 0;
    if (!sp_require_crypto(env)) {
        return 0;
    }
    if (mode != SP_AES_CTR && mode != SP_AES_GCM && mode != SP_AES_CFB128) {
        sp_throw(env, "java/lang/IllegalArgumentException", "unknown cipher mode");
        return 0;
    }
    if (!sp_key_copy(env, jkey, key, &key_length)) {
        goto cleanup;
    }
    if (mode != SP_AES_GCM && !sp_copy_fixed(env, jiv, iv, SP_AES_BLOCK, "iv")) {
        goto cleanup;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL || (c->ctx = sp_crypto->EVP_CIPHER_CTX_new()) == NULL) {
        sp_throw(env, "java/lang/OutOfMemoryError", "EVP_CIPHER_CTX_new failed");
        goto cleanup;
    }
    c->mode = mode;
    if (!sp_crypto->EVP_CipherInit_ex(c->ctx, sp_cipher(mode, key_length), NULL, key,
                                      mode == SP_AES_GCM ? NULL : iv, encrypt ? 1 : 0)) {
        sp_throw_openssl(env, "java/security/InvalidKeyException", "EVP_CipherInit_ex failed");
        goto cleanup;
    }
    c->magic = CIPHER_MAGIC;
    result = (jlong)(intptr_t)c;
    c = NULL;

cleanup:
    sp_cleanse(key, sizeof(key));
    if (c != NULL) {
        if (c->ctx != NULL) {
            sp_crypto->EVP_CIPHER_CTX_free(c->ctx);
        }
        free(c);
    }
    return result;
}

/* Frees a handle from cipherNew; the caller guarantees once, with no call running on it. */
static void JNICALL cipherFree(JNIEnv *env, jclass cls, jlong handle) {
    (void)cls;
    struct sp_cipher *c = (struct sp_cipher *)(intptr_t)handle;
    if (c == NULL) {
        sp_throw(env, "java/lang/IllegalStateException", "cipher handle is null");
        return;
    }
    sp_crypto->EVP_CIPHER_CTX_free(c->ctx); /* cleanses the key schedule */
    sp_cleanse(c, sizeof(*c));
    free(c);
}

/* CTR/CFB: start again at a new IV (counter block) without touching the key schedule. */
static void JNICALL cipherReset(JNIEnv *env, jclass cls, jlong handle, jbyteArray jiv,
                                jboolean encrypt) {
    (void)cls;
    unsigned char iv[SP_AES_BLOCK];
    struct sp_cipher *c = sp_cipher_from_handle(env, handle, 0);
    if (c == NULL) {
        return;
    }
    if (c->mode == SP_AES_GCM) {
        sp_throw(env, "java/lang/IllegalArgumentException", "GCM takes its nonce in seal/open");
        return;
    }
    if (!sp_copy_fixed(env, jiv, iv, SP_AES_BLOCK, "iv")) {
        return;
    }
    if (!sp_crypto->EVP_CipherInit_ex(c->ctx, NULL, NULL, NULL, iv, encrypt ? 1 : 0)) {
        sp_throw_openssl(env, "java/security/InvalidAlgorithmParameterException",
                         "EVP_CipherInit_ex (new IV) failed");
    }
}

/*
 * Throws and returns 1 if two direct buffers partly overlap in memory; in place (same start) is
 * fine. Two ranges of one byte[] are checked by the Java layer before every call (Checks): doing
 * it here too would cost each small call the JNI transitions of comparing the array objects.
 */
static int reject_partial_overlap(JNIEnv *env, const struct sp_buffer *in,
                                  const struct sp_buffer *out) {
    if (in->array == NULL && out->array == NULL && sp_buffers_overlap(env, in, out) == SP_PARTIAL) {
        sp_throw(env, "java/lang/IllegalArgumentException",
                 "input and output overlap: use the same start (in place) or disjoint ranges");
        return 1;
    }
    return 0;
}

/* CTR/CFB: transforms len bytes from in to out; in == out at the same offset is allowed. */
static jint JNICALL cipherUpdate(JNIEnv *env, jclass cls, jlong handle, jobject jin, jint in_off,
                                 jobject jout, jint out_off, jint len) {
    (void)cls;
    struct sp_buffer in, out;
    int outl = 0;
    struct sp_cipher *c = sp_cipher_from_handle(env, handle, 0);
    if (c == NULL || !sp_buffer_check(env, &in, jin, in_off, len, "input") ||
        !sp_buffer_check_writable(env, &out, jout, out_off, len, "output") ||
        reject_partial_overlap(env, &in, &out)) {
        return -1;
    }
    if (c->mode == SP_AES_GCM) {
        sp_throw(env, "java/lang/IllegalArgumentException", "use gcmSeal/gcmOpen for GCM");
        return -1;
    }
    if (len == 0) {
        return 0;
    }
    int pinned = sp_buffer_pin(env, &in) && sp_buffer_pin(env, &out);
    int ok = pinned && sp_crypto->EVP_CipherUpdate(c->ctx, out.base + out_off, &outl,
                                                   in.base + in_off, len);
    /* Unpin before any throw: no JNI call is allowed while an array is pinned. */
    sp_buffer_unpin(env, &in, JNI_ABORT);
    if (!sp_buffer_unpin_output(env, &out)) {
        return -1;
    }
    if (!pinned) {
        sp_throw(env, "java/lang/OutOfMemoryError", "pinning a byte[] failed");
        return -1;
    }
    if (!ok || outl != len) {
        sp_throw_openssl(env, "java/lang/IllegalStateException", "EVP_CipherUpdate failed");
        return -1;
    }
    return outl;
}

/* Throws and returns 0 unless array[offset, offset + length) lies inside a non-null byte[]. */
static int small_range(JNIEnv *env, jbyteArray array, jint offset, jint length, const char *name) {
    char message[128];
    if (array == NULL) {
        snprintf(message, sizeof(message), "%s is null", name);
        sp_throw(env, "java/lang/NullPointerException", message);
        return 0;
    }
    jsize size = (*env)->GetArrayLength(env, array);
    if (offset < 0 || (jlong)offset + (jlong)length > (jlong)size) {
        snprintf(message, sizeof(message), "%s: offset %d and length %d out of bounds for size %d", name,
                 (int)offset, (int)length, (int)size);
        sp_throw(env, "java/lang/IndexOutOfBoundsException", message);
        return 0;
    }
    return 1;
}

/*
 * CTR/CFB on byte[] ranges of at most SP_SMALL_CALL bytes. Copying them through the stack with
 * Get/SetByteArrayRegion costs a small call less than cipherUpdate's telling arrays from
 * buffers (IsInstanceOf) and pinning two arrays; it also writes back only the call's range, so
 * it is right on JVMs that hand out copies. The stack copy is cleansed before returning.
 */
static jint JNICALL cipherUpdateSmall(JNIEnv *env, jclass cls, jlong handle, jbyteArray jin, jint in_off,
                                      jbyteArray jout, jint out_off, jint len) {
    (void)cls;
    unsigned char data[SP_SMALL_CALL];
    char message[96];
    int outl = 0;
    struct sp_cipher *c = sp_cipher_from_handle(env, handle, 0);
    if (c == NULL) {
        return -1;
    }
    if (c->mode == SP_AES_GCM) {
        sp_throw(env, "java/lang/IllegalArgumentException", "use gcmSeal/gcmOpen for GCM");
        return -1;
    }
    if (len < 0 || len > SP_SMALL_CALL) {
        snprintf(message, sizeof(message), "length %d: small calls take 0 to %d bytes", (int)len, SP_SMALL_CALL);
        sp_throw(env, "java/lang/IllegalArgumentException", message);
        return -1;
    }
    /* Both ranges before the cipher moves on: a refused output must not cost keystream. */
    if (!small_range(env, jin, in_off, len, "input") || !small_range(env, jout, out_off, len, "output")) {
        return -1;
    }
    if (len == 0) {
        return 0;
    }
    (*env)->GetByteArrayRegion(env, jin, in_off, len, (jbyte *)data);
    int ok = sp_crypto->EVP_CipherUpdate(c->ctx, data, &outl, data, len);
    if (ok && outl == len) {
        (*env)->SetByteArrayRegion(env, jout, out_off, len, (const jbyte *)data);
    }
    sp_cleanse(data, (size_t)len);
    if (!ok || outl != len) {
        sp_throw_openssl(env, "java/lang/IllegalStateException", "EVP_CipherUpdate failed");
        return -1;
    }
    return outl;
}

/*
 * GCM seal/open share one body: set the nonce, feed the AAD, transform the data, then write
 * (seal) or check (open) the 16-byte tag that follows the ciphertext.
 */
static jint gcm(JNIEnv *env, jlong handle, jbyteArray jnonce, jbyteArray jaad, jobject jin,
                jint in_off, jint in_len, jobject jout, jint out_off, int encrypt) {
    unsigned char nonce[SP_GCM_NONCE_LENGTH];
    unsigned char tag[SP_GCM_TAG_LENGTH];
    struct sp_buffer in, out, aad;
    int outl = 0, finl = 0;
    char message[128];
    struct sp_cipher *c = sp_cipher_from_handle(env, handle, SP_AES_GCM);
    memset(&aad, 0, sizeof(aad));
    if (c == NULL || !sp_copy_fixed(env, jnonce, nonce, SP_GCM_NONCE_LENGTH, "nonce")) {
        return -1;
    }
    /* The input range first: it rejects a negative in_len before any arithmetic on it. */
    if (!sp_buffer_check(env, &in, jin, in_off, in_len, "input")) {
        return -1;
    }
    if (!encrypt && in_len < SP_GCM_TAG_LENGTH) {
        snprintf(message, sizeof(message),
                 "ciphertext of %d bytes is shorter than the 16-byte tag", (int)in_len);
        sp_throw(env, "javax/crypto/AEADBadTagException", message);
        return -1;
    }
    if (encrypt && in_len > 0x7fffffff - SP_GCM_TAG_LENGTH) {
        snprintf(message, sizeof(message),
                 "plaintext of %d bytes is too long for one call: at most %d", (int)in_len,
                 0x7fffffff - SP_GCM_TAG_LENGTH);
        sp_throw(env, "java/lang/IllegalArgumentException", message);
        return -1;
    }
    /* 0 <= in_len <= INT_MAX - 16 when sealing, 16 <= in_len when opening: no overflow. */
    int data_len = encrypt ? in_len : in_len - SP_GCM_TAG_LENGTH;
    int out_len = encrypt ? in_len + SP_GCM_TAG_LENGTH : data_len;
    if (!sp_buffer_check_writable(env, &out, jout, out_off, out_len, "output") ||
        reject_partial_overlap(env, &in, &out)) {
        return -1;
    }
    if (jaad != NULL &&
        !sp_buffer_check(env, &aad, jaad, 0, (*env)->GetArrayLength(env, jaad), "aad")) {
        return -1;
    }
    if (!sp_crypto->EVP_CipherInit_ex(c->ctx, NULL, NULL, NULL, nonce, encrypt)) {
        sp_throw_openssl(env, "java/security/InvalidAlgorithmParameterException",
                         "EVP_CipherInit_ex (nonce) failed");
        return -1;
    }
    /* No JNI call may happen while arrays are pinned: record the outcome, unpin, then throw. */
    enum { DONE, PIN_FAILED, OP_FAILED, BAD_TAG } status = DONE;
    if (!sp_buffer_pin(env, &aad) || !sp_buffer_pin(env, &in) || !sp_buffer_pin(env, &out)) {
        status = PIN_FAILED;
        goto unpin;
    }
    if (aad.length > 0) {
        int aadl = 0;
        if (!sp_crypto->EVP_CipherUpdate(c->ctx, NULL, &aadl, aad.base, aad.length)) {
            status = OP_FAILED;
            goto unpin;
        }
    }
    if (!encrypt) {
        memcpy(tag, in.base + in_off + data_len, SP_GCM_TAG_LENGTH);
    }
    if (data_len > 0 && !sp_crypto->EVP_CipherUpdate(c->ctx, out.base + out_off, &outl,
                                                     in.base + in_off, data_len)) {
        status = OP_FAILED;
        goto unpin;
    }
    if (!encrypt && !sp_crypto->EVP_CIPHER_CTX_ctrl(c->ctx, OSSL_EVP_CTRL_GCM_SET_TAG,
                                                    SP_GCM_TAG_LENGTH, tag)) {
        status = OP_FAILED;
        goto unpin;
    }
    if (!sp_crypto->EVP_CipherFinal_ex(c->ctx, out.base + out_off + outl, &finl)) {
        status = encrypt ? OP_FAILED : BAD_TAG;
        goto unpin;
    }
    if (encrypt && !sp_crypto->EVP_CIPHER_CTX_ctrl(c->ctx, OSSL_EVP_CTRL_GCM_GET_TAG,
                                                   SP_GCM_TAG_LENGTH,
                                                   out.base + out_off + data_len)) {
        status = OP_FAILED;
    }

unpin:
    if (!encrypt && (status == OP_FAILED || status == BAD_TAG)) {
        /* Release nothing unauthenticated, whatever failed: wipe what may have been decrypted. */
        memset(out.base + out_off, 0, (size_t)data_len);
    }
    sp_buffer_unpin(env, &in, JNI_ABORT);
    sp_buffer_unpin(env, &aad, JNI_ABORT);
    if (!sp_buffer_unpin_output(env, &out)) {
        return -1;
    }
    switch (status) {
    case PIN_FAILED:
        sp_throw(env, "java/lang/OutOfMemoryError", "pinning a byte[] failed");
        return -1;
    case OP_FAILED:
        sp_throw_openssl(env, "java/lang/IllegalStateException", "AES-GCM operation failed");
        return -1;
    case BAD_TAG:
        /* A bad tag queues no error of its own: an entry in the queue is another caller's (a
         * library that failed to load something in this thread), not a reason to report. */
        if (sp_crypto->ERR_clear_error != NULL) {
            sp_crypto->ERR_clear_error();
        }
        sp_throw(env, "javax/crypto/AEADBadTagException", "AES-GCM authentication failed: tag mismatch");
        return -1;
    case DONE:
        break;
    }
    return out_len;
}

static jint JNICALL gcmSeal(JNIEnv *env, jclass cls, jlong handle, jbyteArray nonce, jbyteArray aad,
                            jobject in, jint in_off, jint in_len, jobject out, jint out_off) {
    (void)cls;
    return gcm(env, handle, nonce, aad, in, in_off, in_len, out, out_off, 1);
}

static jint JNICALL gcmOpen(JNIEnv *env, jclass cls, jlong handle, jbyteArray nonce, jbyteArray aad,
                            jobject in, jint in_off, jint in_len, jobject out, jint out_off) {
    (void)cls;
    return gcm(env, handle, nonce, aad, in, in_off, in_len, out, out_off, 0);
}

static const JNINativeMethod methods[] = {
    {"cipherNew", "(I[B[BZ)J", (void *)cipherNew},
    {"cipherFree", "(J)V", (void *)cipherFree},
    {"cipherReset", "(J[BZ)V", (void *)cipherReset},
    {"cipherUpdate", "(JLjava/lang/Object;ILjava/lang/Object;II)I", (void *)cipherUpdate},
    {"cipherUpdateSmall", "(J[BI[BII)I", (void *)cipherUpdateSmall},
    {"gcmSeal", "(J[B[BLjava/lang/Object;IILjava/lang/Object;I)I", (void *)gcmSeal},
    {"gcmOpen", "(J[B[BLjava/lang/Object;IILjava/lang/Object;I)I", (void *)gcmOpen},
};

int sp_register_cipher(JNIEnv *env, jclass bridge) {
    return (*env)->RegisterNatives(env, bridge, methods, sizeof(methods) / sizeof(methods[0])) == 0;
}
