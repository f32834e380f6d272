/*
 * Data arguments: a byte[] (pinned with GetPrimitiveArrayCritical for the length of one call)
 * or a direct ByteBuffer (used by address). Checks happen before pinning, because no other JNI
 * call is allowed while an array is pinned.
 */
#include <stdio.h>
#include <string.h>

#include "sealpipe.h"

static jclass byte_array_class = NULL;
static jmethodID buffer_is_read_only = NULL;

int sp_init_buffers(JNIEnv *env) {
    jclass local = (*env)->FindClass(env, "[B");
    if (local == NULL) {
        return 0;
    }
    byte_array_class = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    jclass buffer = (*env)->FindClass(env, "java/nio/Buffer");
    if (buffer == NULL) {
        return 0;
    }
    buffer_is_read_only = (*env)->GetMethodID(env, buffer, "isReadOnly", "()Z");
    (*env)->DeleteLocalRef(env, buffer);
    return byte_array_class != NULL && buffer_is_read_only != NULL;
}

/* Validates obj[offset, offset + length); returns 0 with an exception pending when invalid. */
int sp_buffer_check(JNIEnv *env, struct sp_buffer *b, jobject obj, jint offset, jint length,
                    const char *name) {
    char message[160];
    memset(b, 0, sizeof(*b));
    if (obj == NULL) {
        snprintf(message, sizeof(message), "%s is null", name);
        sp_throw(env, "java/lang/NullPointerException", message);
        return 0;
    }
    jlong capacity;
    if ((*env)->IsInstanceOf(env, obj, byte_array_class)) {
        b->array = (jbyteArray)obj;
        capacity = (*env)->GetArrayLength(env, b->array);
    } else {
        b->base = (*env)->GetDirectBufferAddress(env, obj);
        capacity = (*env)->GetDirectBufferCapacity(env, obj);
        if (b->base == NULL || capacity < 0) {
            snprintf(message, sizeof(message), "%s must be a byte[] or a direct ByteBuffer", name);
            sp_throw(env, "java/lang/IllegalArgumentException", message);
            return 0;
        }
    }
    if (offset < 0 || length < 0 || (jlong)offset + (jlong)length > capacity) {
        snprintf(message, sizeof(message), "%s: offset %d and length %d out of bounds for size %lld",
                 name, (int)offset, (int)length, (long long)capacity);
        sp_throw(env, "java/lang/IndexOutOfBoundsException", message);
        return 0;
    }
    b->obj = obj;
    b->offset = offset;
    b->length = length;
    return 1;
}

/*
 * As sp_buffer_check, for a range the call writes: a read-only direct buffer still has an
 * address, and writing through it would break Java's promise (or fault, for a read-only mapping).
 */
int sp_buffer_check_writable(JNIEnv *env, struct sp_buffer *b, jobject obj, jint offset,
                             jint length, const char *name) {
    char message[160];
    if (!sp_buffer_check(env, b, obj, offset, length, name)) {
        return 0;
    }
    if (b->array == NULL) {
        jboolean read_only = (*env)->CallBooleanMethod(env, obj, buffer_is_read_only);
        if ((*env)->ExceptionCheck(env)) {
            return 0;
        }
        if (read_only) {
            snprintf(message, sizeof(message), "%s is a read-only buffer", name);
            sp_throw(env, "java/lang/IllegalArgumentException", message);
            return 0;
        }
    }
    return 1;
}

/*
 * How two checked ranges lie in memory. Two byte[] ranges can share memory only in one array;
 * two direct buffers can be different views of the same memory (duplicate, slice, or two
 * buffers over one address), so they are compared by address, not by object.
 */
enum sp_overlap sp_buffers_overlap(JNIEnv *env, const struct sp_buffer *a,
                                   const struct sp_buffer *b) {
    uintptr_t a_start, b_start;
    if (a->length == 0 || b->length == 0) {
        return SP_DISJOINT;
    }
    if (a->array != NULL && b->array != NULL) {
        if (!(*env)->IsSameObject(env, a->array, b->array)) {
            return SP_DISJOINT;
        }
        a_start = (uintptr_t)a->offset;
        b_start = (uintptr_t)b->offset;
    } else if (a->array == NULL && b->array == NULL) {
        a_start = (uintptr_t)(a->base + a->offset);
        b_start = (uintptr_t)(b->base + b->offset);
    } else {
        return SP_DISJOINT; /* a Java array never lies inside a direct buffer's memory */
    }
    if (a_start >= b_start + (uintptr_t)b->length || b_start >= a_start + (uintptr_t)a->length) {
        return SP_DISJOINT;
    }
    return a_start == b_start ? SP_SAME_START : SP_PARTIAL;
}

int sp_buffer_pin(JNIEnv *env, struct sp_buffer *b) {
    if (b->array != NULL) {
        /* On failure the caller unpins the others, then throws: no JNI call while pinned. */
        b->base = (*env)->GetPrimitiveArrayCritical(env, b->array, NULL);
        if (b->base == NULL) {
            return 0;
        }
    }
    return 1;
}

/* mode: 0 to copy back (outputs), JNI_ABORT for inputs. */
void sp_buffer_unpin(JNIEnv *env, struct sp_buffer *b, jint mode) {
    if (b->array != NULL && b->base != NULL) {
        (*env)->ReleasePrimitiveArrayCritical(env, b->array, b->base, mode);
        b->base = NULL;
    }
}

void sp_cleanse(void *p, size_t n) {
    if (sp_crypto != NULL) {
        sp_crypto->OPENSSL_cleanse(p, n);
    } else {
        volatile unsigned char *v = p;
        while (n--) {
            *v++ = 0;
        }
    }
}

/* Copies a 16/24/32-byte key into out (at least 32 bytes); the caller cleanses it. */
int sp_key_copy(JNIEnv *env, jbyteArray key, unsigned char *out, int *out_length) {
    char message[96];
    if (key == NULL) {
        sp_throw(env, "java/lang/NullPointerException", "key is null");
        return 0;
    }
    jsize n = (*env)->GetArrayLength(env, key);
    if (n != 16 && n != 24 && n != 32) {
        snprintf(message, sizeof(message), "key must be 16, 24 or 32 bytes, not %d", (int)n);
        sp_throw(env, "java/security/InvalidKeyException", message);
        return 0;
    }
    (*env)->GetByteArrayRegion(env, key, 0, n, (jbyte *)out);
    *out_length = (int)n;
    return !(*env)->ExceptionCheck(env);
}
