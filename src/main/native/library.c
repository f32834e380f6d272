/*
 * JNI_OnLoad and the library-level entry points of NativeCrypto: loading libcrypto, version
 * and path, CPU features, and the check that Java and C agree on shared constants.
 */
#include <stdio.h>

#include "sealpipe.h"

static jboolean JNICALL loadLibcrypto(JNIEnv *env, jclass cls, jstring path) {
    (void)cls;
    return sp_load_libcrypto(env, path);
}

static jstring JNICALL opensslVersion(JNIEnv *env, jclass cls) {
    (void)cls;
    if (!sp_require_crypto(env)) {
        return NULL;
    }
    return (*env)->NewStringUTF(env, sp_crypto->OpenSSL_version(OSSL_OPENSSL_VERSION));
}

static jstring JNICALL opensslPath(JNIEnv *env, jclass cls) {
    (void)cls;
    if (!sp_require_crypto(env)) {
        return NULL;
    }
    return (*env)->NewStringUTF(env, sp_crypto->path);
}

static jint JNICALL cpuFeatures(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return sp_cpu_features();
}

/* Throws if the values Java declares differ from the ones compiled in here. */
static void JNICALL checkConstants(JNIEnv *env, jclass cls, jintArray jvalues) {
    (void)cls;
    static const jint expected[] = {
        SP_AES_CTR,         SP_AES_GCM,        SP_AES_CFB128,
        SP_GCM_NONCE_LENGTH, SP_GCM_TAG_LENGTH, SP_HMAC_SHA256_LENGTH,
        SP_CPU_AESNI,       SP_CPU_PCLMULQDQ,  SP_CPU_AVX2,
        SP_CPU_VAES,        SP_CPU_VPCLMULQDQ, SP_CPU_AVX512,
        SP_CPU_KNOWN,
        SP_CHUNK_SIZE,      SP_SMALL_CALL,
    };
    const jsize n = (jsize)(sizeof(expected) / sizeof(expected[0]));
    jint values[sizeof(expected) / sizeof(expected[0])];
    char message[128];
    if (jvalues == NULL || (*env)->GetArrayLength(env, jvalues) != n) {
        snprintf(message, sizeof(message), "expected %d constants from Java", (int)n);
        sp_throw(env, "java/lang/LinkageError", message);
        return;
    }
    (*env)->GetIntArrayRegion(env, jvalues, 0, n, values);
    for (jsize i = 0; i < n; i++) {
        if (values[i] != expected[i]) {
            snprintf(message, sizeof(message), "constant %d is %d in Java but %d in C", (int)i,
                     (int)values[i], (int)expected[i]);
            sp_throw(env, "java/lang/LinkageError", message);
            return;
        }
    }
}

static const JNINativeMethod methods[] = {
    {"loadLibcrypto", "(Ljava/lang/String;)Z", (void *)loadLibcrypto},
    {"opensslVersion", "()Ljava/lang/String;", (void *)opensslVersion},
    {"opensslPath", "()Ljava/lang/String;", (void *)opensslPath},
    {"cpuFeatures", "()I", (void *)cpuFeatures},
    {"checkConstants", "([I)V", (void *)checkConstants},
};

int sp_register_library(JNIEnv *env, jclass bridge) {
    return (*env)->RegisterNatives(env, bridge, methods, sizeof(methods) / sizeof(methods[0])) == 0;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    (void)reserved;
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK) {
        return JNI_ERR;
    }
    jclass bridge = (*env)->FindClass(env, SP_BRIDGE_CLASS);
    if (bridge == NULL || !sp_init_buffers(env) || !sp_register_library(env, bridge) ||
        !sp_register_buffers(env, bridge) || !sp_register_cipher(env, bridge) ||
        !sp_register_hmac(env, bridge) || !sp_register_chunks(env, bridge)) {
        return JNI_ERR;
    }
    (*env)->DeleteLocalRef(env, bridge);
    return JNI_VERSION_1_8;
}
