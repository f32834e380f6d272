/*
 * HMAC-SHA256 (baseline for the CFB+HMAC scheme). The HMAC_* calls exist in OpenSSL 1.1 and
 * 3.x; HMAC_Init_ex with a NULL key restarts a message with the key already set.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sealpipe.h"

/* As for ciphers (cipher.c): the magic catches a handle of another kind, never a freed one. */
#define HMAC_MAGIC 0x5ea1ac01u

struct sp_hmac {
    uint32_t magic;
    HMAC_CTX *ctx;
};

static struct sp_hmac *hmac_from_handle(JNIEnv *env, jlong handle) {
    struct sp_hmac *h = (struct sp_hmac *)(intptr_t)handle;
    if (h == NULL) {
        sp_throw(env, "java/lang/IllegalStateException", "HMAC handle is null");
        return NULL;
    }
    if (h->magic != HMAC_MAGIC) {
        sp_throw(env, "java/lang/IllegalArgumentException", "handle is not an HMAC handle");
        return NULL;
    }
    return h;
}

static jlong JNICALL hmacNew(JNIEnv *env, jclass cls, jbyteArray jkey) {
    (void)cls;
    struct sp_hmac *h = NULL;
    unsigned char *key = NULL;
    jsize key_length = 0;
    jlong result = 0;
    if (!sp_require_crypto(env)) {
        return 0;
    }
    if (jkey == NULL) {
        sp_throw(env, "java/lang/NullPointerException", "key is null");
        return 0;
    }
    key_length = (*env)->GetArrayLength(env, jkey);
    if (key_length == 0) {
        sp_throw(env, "java/security/InvalidKeyException", "HMAC key must not be empty");
        return 0;
    }
    key = malloc((size_t)key_length);
    h = calloc(1, sizeof(*h));
    if (key == NULL || h == NULL || (h->ctx = sp_crypto->HMAC_CTX_new()) == NULL) {
        sp_throw(env, "java/lang/OutOfMemoryError", "HMAC_CTX_new failed");
        goto cleanup;
    }
    (*env)->GetByteArrayRegion(env, jkey, 0, key_length, (jbyte *)key);
    if (!sp_crypto->HMAC_Init_ex(h->ctx, key, key_length, sp_crypto->EVP_sha256(), NULL)) {
        sp_throw_openssl(env, "java/security/InvalidKeyException", "HMAC_Init_ex failed");
        goto cleanup;
    }
    h->magic = HMAC_MAGIC;
    result = (jlong)(intptr_t)h;
    h = NULL;

cleanup:
    if (key != NULL) {
        sp_cleanse(key, (size_t)key_length);
        free(key);
    }
    if (h != NULL) {
        if (h->ctx != NULL) {
            sp_crypto->HMAC_CTX_free(h->ctx);
        }
        free(h);
    }
    return result;
}

/* Frees a handle from hmacNew; the caller guarantees once, with no call running on it. */
static void JNICALL hmacFree(JNIEnv *env, jclass cls, jlong handle) {
    (void)cls;
    struct sp_hmac *h = (struct sp_hmac *)(intptr_t)handle;
    if (h == NULL) {
        sp_throw(env, "java/lang/IllegalStateException", "HMAC handle is null");
        return;
    }
    sp_crypto->HMAC_CTX_free(h->ctx);
    sp_cleanse(h, sizeof(*h));
    free(h);
}

static void JNICALL hmacUpdate(JNIEnv *env, jclass cls, jlong handle, jobject jin, jint off,
                               jint len) {
    (void)cls;
    struct sp_buffer in;
    struct sp_hmac *h = hmac_from_handle(env, handle);
    if (h == NULL || !sp_buffer_check(env, &in, jin, off, len, "input") || len == 0) {
        return;
    }
    int pinned = sp_buffer_pin(env, &in);
    int ok = pinned && sp_crypto->HMAC_Update(h->ctx, in.base + off, (size_t)len);
    sp_buffer_unpin(env, &in, JNI_ABORT);
    if (!pinned) {
        sp_throw(env, "java/lang/OutOfMemoryError", "pinning a byte[] failed");
    } else if (!ok) {
        sp_throw_openssl(env, "java/lang/IllegalStateException", "HMAC_Update failed");
    }
}

/* Writes the 32-byte MAC to out[off..] and restarts for the next message with the same key. */
static void JNICALL hmacFinal(JNIEnv *env, jclass cls, jlong handle, jbyteArray jout, jint off) {
    (void)cls;
    unsigned char mac[SP_HMAC_SHA256_LENGTH];
    unsigned int mac_length = 0;
    struct sp_buffer out;
    struct sp_hmac *h = hmac_from_handle(env, handle);
    if (h == NULL || !sp_buffer_check(env, &out, jout, off, SP_HMAC_SHA256_LENGTH, "output")) {
        return;
    }
    if (!sp_crypto->HMAC_Final(h->ctx, mac, &mac_length) || mac_length != SP_HMAC_SHA256_LENGTH ||
        !sp_crypto->HMAC_Init_ex(h->ctx, NULL, 0, NULL, NULL)) {
        sp_throw_openssl(env, "java/lang/IllegalStateException", "HMAC_Final failed");
        return;
    }
    (*env)->SetByteArrayRegion(env, (jbyteArray)jout, off, SP_HMAC_SHA256_LENGTH, (jbyte *)mac);
}

static const JNINativeMethod methods[] = {
    {"hmacNew", "([B)J", (void *)hmacNew},
    {"hmacFree", "(J)V", (void *)hmacFree},
    {"hmacUpdate", "(JLjava/lang/Object;II)V", (void *)hmacUpdate},
    {"hmacFinal", "(J[BI)V", (void *)hmacFinal},
};

int sp_register_hmac(JNIEnv *env, jclass bridge) {
    return (*env)->RegisterNatives(env, bridge, methods, sizeof(methods) / sizeof(methods[0])) == 0;
}
