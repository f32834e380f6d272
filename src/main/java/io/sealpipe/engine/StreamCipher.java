package io.sealpipe.engine;

import java.nio.ByteBuffer;

/**
 * A keyed stream transformation (AES-CTR or AES-CFB128) whose position carries over between
 * calls: two updates of 5 and 11 bytes give the same output as one of 16.
 *
 * <p>Input and output may be the same array at the same offset (in place); other overlaps are
 * rejected. Buffers may be heap or direct. Not thread-safe.
 */
public interface StreamCipher extends AutoCloseable {

    /** Starts again at a new 16-byte IV (counter block), keeping the key schedule. */
    void reset(byte[] iv);

    /**
     * Transforms {@code length} bytes of {@code in} into {@code out}.
     *
     * @return {@code length}
     */
    int update(byte[] in, int inOffset, int length, byte[] out, int outOffset);

    /**
     * Transforms all remaining bytes of {@code in} into {@code out}, advancing both positions.
     *
     * @return the number of bytes transformed
     * @throws IllegalArgumentException if {@code out} has less room than {@code in} has bytes
     */
    int update(ByteBuffer in, ByteBuffer out);

    /** Frees the context and its key schedule; idempotent. */
    @Override
    void close();
}
