/*
 * Turning failures into Java exceptions. OpenSSL's per-thread error queue is drained on every
 * failure so that a stale entry never leaks into the next call's message.
 */
#include <stdio.h>
#include <string.h>

#include "sealpipe.h"

void sp_throw(JNIEnv *env, const char *class_name, const char *message) {
    if ((*env)->ExceptionCheck(env)) {
        return; /* never overwrite a pending exception */
    }
    jclass cls = (*env)->FindClass(env, class_name);
    if (cls == NULL) {
        return; /* NoClassDefFoundError pending */
    }
    (*env)->ThrowNew(env, cls, message);
    (*env)->DeleteLocalRef(env, cls);
}

/* Throws class_name with "what: <first OpenSSL error>" and empties the error queue. */
void sp_throw_openssl(JNIEnv *env, const char *class_name, const char *what) {
    char reason[256] = "no error queued";
    unsigned long first = sp_crypto->ERR_get_error();
    if (first != 0) {
        sp_crypto->ERR_error_string_n(first, reason, sizeof(reason));
    }
    while (sp_crypto->ERR_get_error() != 0) {
        /* drain the rest */
    }
    char message[512];
    snprintf(message, sizeof(message), "%s (OpenSSL: %s)", what, reason);
    sp_throw(env, class_name, message);
}

int sp_require_crypto(JNIEnv *env) {
    if (sp_crypto == NULL) {
        sp_throw(env, "java/lang/IllegalStateException",
                 "libcrypto is not loaded: call NativeCrypto.loadLibcrypto first");
        return 0;
    }
    return 1;
}
