package io.sealpipe.engine;

import java.nio.ByteBuffer;

/**
 * A keyed MAC (HMAC-SHA256) computed incrementally; {@link #doFinal} restarts it, with the same
 * key, for the next message. Not thread-safe; close it when done.
 */
public interface Hmac extends AutoCloseable {

    /**
     * Length of the MAC in bytes.
     *
     * @return 32 for HMAC-SHA256
     */
    int macLength();

    /**
     * Adds bytes to the message.
     *
     * @param in the data
     * @param offset where the data starts in {@code in}
     * @param length bytes to add, 0 or more
     * @throws IndexOutOfBoundsException if the range does not fit the array
     * @throws IllegalStateException if this MAC is closed
     */
    void update(byte[] in, int offset, int length);

    /**
     * Adds the remaining bytes of {@code in} to the message, advancing its position to its limit.
     *
     * @param in the data, heap or direct
     * @throws IllegalStateException if this MAC is closed
     */
    void update(ByteBuffer in);

    /**
     * Writes the MAC of everything updated since the last call and starts a new message.
     *
     * @param out receives {@link #macLength()} bytes
     * @param offset where to write in {@code out}
     * @throws IndexOutOfBoundsException if {@code out} has no room for the MAC at {@code offset}
     * @throws IllegalStateException if this MAC is closed
     */
    void doFinal(byte[] out, int offset);

    /**
     * Frees the context and its key; idempotent. Safe from another thread
     * while a call runs: close() returns at once, the running call finishes normally and frees
     * the context as it leaves, and a call that starts after close() fails with
     * IllegalStateException.
     */
    @Override
    void close();
}
