/*
 * Data arguments: a byte[] (pinned with GetPrimitiveArrayCritical for the length of one call)
 * or a direct ByteBuffer (used by address). Checks happen before pinning, because no other JNI
 * call is allowed while an array is pinned. Also the bridge's entry point that reads a direct
 * buffer's address for Java.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sealpipe.h"

static jclass byte_array_class = NULL;
static jmethodID buffer_is_read_only = NULL;
/*
 * Whether this JVM hands out copies of arrays from GetPrimitiveArrayCritical. HotSpot under
 * -Xcheck:jni does, without saying so through isCopy; other JVMs and collectors may, and say so.
 */
static int jvm_copies_arrays = 0;

/* Two nested pins of one array give the same address only if the JVM really pins it. */
static int detect_copying(JNIEnv *env) {
    jbyteArray probe = (*env)->NewByteArray(env, 16);
    if (probe == NULL) {
        return 0;
    }
    jboolean first_is_copy = JNI_FALSE;
    void *first = (*env)->GetPrimitiveArrayCritical(env, probe, &first_is_copy);
    void *second = first == NULL ? NULL : (*env)->GetPrimitiveArrayCritical(env, probe, NULL);
    if (second != NULL) {
        (*env)->ReleasePrimitiveArrayCritical(env, probe, second, JNI_ABORT);
    }
    if (first != NULL) {
        (*env)->ReleasePrimitiveArrayCritical(env, probe, first, JNI_ABORT);
    }
    (*env)->DeleteLocalRef(env, probe);
    if (first == NULL || second == NULL) {
        sp_throw(env, "java/lang/OutOfMemoryError", "pinning a byte[] failed");
        return 0;
    }
    jvm_copies_arrays = first_is_copy || first != second;
    return 1;
}

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
    return byte_array_class != NULL && buffer_is_read_only != NULL && detect_copying(env);
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

/*
 * NativeCrypto.directBufferAddress: the address of a direct buffer's index 0, read from the
 * buffer object without touching its memory, for Java's check that an input and an output do
 * not overlap (Buffers.checkOverlap). A direct buffer with no memory (an empty file mapping)
 * has address 0.
 */
static jlong JNICALL directBufferAddress(JNIEnv *env, jclass cls, jobject buffer) {
    (void)cls;
    if (buffer == NULL) {
        sp_throw(env, "java/lang/NullPointerException", "buffer is null");
        return -1;
    }
    /* -1 for a heap buffer: only a direct buffer has an address. */
    if ((*env)->GetDirectBufferCapacity(env, buffer) < 0) {
        sp_throw(env, "java/lang/IllegalArgumentException", "buffer must be a direct ByteBuffer");
        return -1;
    }
    return (jlong)(uintptr_t)(*env)->GetDirectBufferAddress(env, buffer);
}

static const JNINativeMethod methods[] = {
    {"directBufferAddress", "(Ljava/nio/ByteBuffer;)J", (void *)directBufferAddress},
};

int sp_register_buffers(JNIEnv *env, jclass bridge) {
    return (*env)->RegisterNatives(env, bridge, methods, sizeof(methods) / sizeof(methods[0])) == 0;
}

int sp_buffer_pin(JNIEnv *env, struct sp_buffer *b) {
    if (b->array != NULL) {
        /* On failure the caller unpins the others, then throws: no JNI call while pinned. */
        b->base = (*env)->GetPrimitiveArrayCritical(env, b->array, &b->is_copy);
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

/*
 * Unpins an output after the call wrote its range. A JVM may hand out a copy of an array
 * instead of pinning it (see jvm_copies_arrays), and releasing a copy with mode 0 writes the
 * whole array back, over the ranges other threads write at the same time: the parts of a
 * parallel stream share one array. So from a copy only this call's range goes back.
 * SetByteArrayRegion is a JNI call, so this must be the call's last unpin. Returns 0 with an
 * OutOfMemoryError pending if the range could not be copied back.
 */
int sp_buffer_unpin_output(JNIEnv *env, struct sp_buffer *b) {
    if (b->array == NULL || b->base == NULL) {
        return 1;
    }
    if (!b->is_copy && !jvm_copies_arrays) {
        sp_buffer_unpin(env, b, 0);
        return 1;
    }
    size_t n = (size_t)b->length;
    unsigned char *range = malloc(n > 0 ? n : 1);
    if (range != NULL) {
        memcpy(range, b->base + b->offset, n);
    }
    sp_buffer_unpin(env, b, JNI_ABORT);
    if (range == NULL) {
        sp_throw(env, "java/lang/OutOfMemoryError", "copying the output back from the JVM's copy failed");
        return 0;
    }
    (*env)->SetByteArrayRegion(env, b->array, b->offset, b->length, (const jbyte *)range);
    sp_cleanse(range, n);
    free(range);
    return 1;
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
