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

    /**
     * Starts again at a new IV (counter block), keeping the key schedule.
     *
     * @param iv 16 bytes: for CTR the initial counter block, for CFB the first register
     * @throws IllegalArgumentException if {@code iv} is not 16 bytes
     * @throws IllegalStateException if this cipher is closed
     */
    void reset(byte[] iv);

    /**
     * Transforms {@code length} bytes of {@code in} into {@code out}.
     *
     * @param in the input
     * @param inOffset where the input starts in {@code in}
     * @param length bytes to transform, 0 or more
     * @param out receives {@code length} bytes; may be {@code in} at the same offset
     * @param outOffset where to write in {@code out}
     * @return {@code length}
     * @throws IllegalArgumentException if the two ranges partly overlap in one array
     * @throws IndexOutOfBoundsException if a range does not fit its array
     * @throws IllegalStateException if this cipher is closed
     */
    int update(byte[] in, int inOffset, int length, byte[] out, int outOffset);

    /**
     * Transforms all remaining bytes of {@code in} into {@code out}, advancing both positions.
     *
     * @param in the input, from its position to its limit
     * @param out receives as many bytes at its position
     * @return the number of bytes transformed
     * @throws IllegalArgumentException if {@code out} has less room than {@code in} has bytes
     * @throws java.nio.ReadOnlyBufferException if {@code out} is read-only
     * @throws IllegalStateException if this cipher is closed
     */
    int update(ByteBuffer in, ByteBuffer out);

    /**
     * Frees the context and its key schedule; idempotent. Safe from another thread
     * while a call runs: close() returns at once, the running call finishes normally and frees
     * the context as it leaves, and a call that starts after close() fails with
     * IllegalStateException.
     */
    @Override
    void close();
}
