package io.sealpipe.engine.openssl;

import java.nio.ByteBuffer;
import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import javax.crypto.AEADBadTagException;

/**
 * The JNI bridge to libsealpipe.so: each method mirrors the libcrypto calls it wraps
 * (src/main/native). Handles are opaque {@code long}s owned by the wrapper objects in this
 * package; data arguments are a byte[] or a direct ByteBuffer with an absolute offset. Every
 * entry point validates its arguments again in C, including what Java cannot see: read-only
 * direct outputs and direct buffers that are views of the same memory.
 *
 * <p>A handle must be freed exactly once and never while a call runs on it; the owners
 * guarantee both (the base classes count calls in flight, a Cleanable frees once). C cannot
 * detect a freed handle without reading freed memory, so it does not try.
 */
final class NativeCrypto {
    private NativeCrypto() {}

    // Shared with sealpipe.h; NativeLibrary passes them to checkConstants at load time.
    static final int AES_CTR = 1;
    static final int AES_GCM = 2;
    static final int AES_CFB128 = 3;
    static final int GCM_NONCE_LENGTH = 12;
    static final int GCM_TAG_LENGTH = 16;
    static final int HMAC_SHA256_LENGTH = 32;
    static final int CPU_AESNI = 1;
    static final int CPU_PCLMULQDQ = 1 << 1;
    static final int CPU_AVX2 = 1 << 2;
    static final int CPU_VAES = 1 << 3;
    static final int CPU_VPCLMULQDQ = 1 << 4;
    static final int CPU_AVX512 = 1 << 5;
    static final int CPU_KNOWN = 1 << 30;
    static final int CHUNK_SIZE = 16384;
    /** The most bytes {@link #cipherUpdateSmall} takes. */
    static final int SMALL_CALL = 512;

    static int[] constants() {
        return new int[] {
            AES_CTR, AES_GCM, AES_CFB128, GCM_NONCE_LENGTH, GCM_TAG_LENGTH, HMAC_SHA256_LENGTH,
            CPU_AESNI, CPU_PCLMULQDQ, CPU_AVX2, CPU_VAES, CPU_VPCLMULQDQ, CPU_AVX512, CPU_KNOWN, CHUNK_SIZE,
            SMALL_CALL,
        };
    }

    /** Throws LinkageError if Java and C disagree on a constant. */
    static native void checkConstants(int[] values);

    /** dlopen's libcrypto (path, or libcrypto.so.3, .so.1.1, .so); UnsatisfiedLinkError if not. */
    static native boolean loadLibcrypto(String path);

    /** OpenSSL_version(OPENSSL_VERSION), e.g. "OpenSSL 3.0.19 27 Jan 2026". */
    static native String opensslVersion();

    /** The file libcrypto was loaded from. */
    static native String opensslPath();

    /**
     * CPU_* bits from cpuid on x86, or AT_HWCAP on aarch64 (CPU_AESNI: AES, CPU_PCLMULQDQ: PMULL);
     * CPU_KNOWN is clear on other architectures.
     */
    static native int cpuFeatures();

    /**
     * GetDirectBufferAddress: where a direct buffer's index 0 lies in memory, read from the
     * buffer object without reading or writing the memory (0 for a buffer with none, such as
     * an empty mapping). Throws NullPointerException for null and IllegalArgumentException for
     * a heap buffer.
     */
    static native long directBufferAddress(ByteBuffer buffer);

    /** EVP_CIPHER_CTX_new + EVP_CipherInit_ex(key, iv); iv is null for GCM. */
    static native long cipherNew(int mode, byte[] key, byte[] iv, boolean encrypt)
            throws InvalidKeyException, InvalidAlgorithmParameterException;

    /** EVP_CIPHER_CTX_free; once per handle, with no call running on it. */
    static native void cipherFree(long cipher);

    /** EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc): new IV, same key schedule. */
    static native void cipherReset(long cipher, byte[] iv, boolean encrypt)
            throws InvalidAlgorithmParameterException;

    /** EVP_CipherUpdate over len bytes; returns len. */
    static native int cipherUpdate(long cipher, Object in, int inOffset, Object out, int outOffset, int len);

    /**
     * {@link #cipherUpdate} for byte[] ranges of at most {@link #SMALL_CALL} bytes, copied
     * through native memory instead of pinned: cheaper per call, for small calls.
     */
    static native int cipherUpdateSmall(long cipher, byte[] in, int inOffset, byte[] out, int outOffset, int len);

    /** Nonce, AAD, EVP_CipherUpdate, EVP_CipherFinal_ex, GET_TAG; returns inLength + 16. */
    static native int gcmSeal(long cipher, byte[] nonce, byte[] aad, Object in, int inOffset, int inLength,
            Object out, int outOffset) throws InvalidAlgorithmParameterException;

    /** Nonce, AAD, EVP_CipherUpdate, SET_TAG, EVP_CipherFinal_ex; returns inLength - 16. */
    static native int gcmOpen(long cipher, byte[] nonce, byte[] aad, Object in, int inOffset, int inLength,
            Object out, int outOffset) throws AEADBadTagException, InvalidAlgorithmParameterException;

    /**
     * Seals {@code count} full chunks of c2sp.org/chunked-encryption (16384 bytes each, read
     * from {@code in}) as chunks {@code first}, {@code first + 1}, ... into {@code count} &times;
     * 16400 bytes of {@code out}; the nonce of chunk i is {@code baseNonce} XOR i. Returns count.
     */
    static native int gcmSealChunks(long cipher, byte[] baseNonce, long first, Object in, int inOffset, int count,
            Object out, int outOffset);

    /**
     * Opens {@code count} sealed full chunks (16400 bytes each) into 16384 bytes each; returns
     * how many authenticated from the first. If that is less than count, the next chunk failed
     * its tag and its output is zeroed.
     */
    static native int gcmOpenChunks(long cipher, byte[] baseNonce, long first, Object in, int inOffset, int count,
            Object out, int outOffset);

    /** HMAC_CTX_new + HMAC_Init_ex(key, EVP_sha256()). */
    static native long hmacNew(byte[] key) throws InvalidKeyException;

    /** HMAC_CTX_free; once per handle, with no call running on it. */
    static native void hmacFree(long hmac);

    static native void hmacUpdate(long hmac, Object in, int offset, int len);

    /** HMAC_Final into out[offset..offset+32), then HMAC_Init_ex to restart with the same key. */
    static native void hmacFinal(long hmac, byte[] out, int offset);
}
