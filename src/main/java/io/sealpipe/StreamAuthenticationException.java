package io.sealpipe;

import java.io.IOException;

/**
 * An authenticated stream failed its checks: the ciphertext was modified, truncated, extended
 * or reordered, or the key or context is wrong. No plaintext from the failed part was released;
 * a stream that threw this throws it again on every later read.
 *
 * <p>{@link #chunk()} names the chunk that failed, or is -1 when the failure is in the header
 * (the salt and key commitment: typically a wrong key or context) or in the message length.
 */
public final class StreamAuthenticationException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The index of the chunk that failed, or -1 for the header or the message length. */
    private final long chunk;

    /**
     * A failed check, thrown by the readers of authenticated streams.
     *
     * @param message what failed and what to do about it
     * @param chunk the index of the chunk that failed, or -1 for the header or the message length
     */
    public StreamAuthenticationException(String message, long chunk) {
        super(message);
        this.chunk = chunk;
    }

    /**
     * A failed check with its cause.
     *
     * @param message what failed and what to do about it
     * @param chunk the index of the chunk that failed, or -1 for the header or the message length
     * @param cause what the check threw, such as an engine's {@code AEADBadTagException}
     */
    public StreamAuthenticationException(String message, long chunk, Throwable cause) {
        super(message, cause);
        this.chunk = chunk;
    }

    /**
     * Which chunk failed. Chunk i holds plaintext bytes from {@code i * 16384}.
     *
     * @return the index (from 0) of the chunk that failed, or -1 for the header or the message
     *     length
     */
    public long chunk() {
        return chunk;
    }

    /**
     * The same failure with {@code where} in front of its message, for a layer that knows
     * what was being read (a file system names the file's path).
     *
     * @param where what was read, such as a path
     * @return a new exception with the same {@link #chunk()} and this one as its cause
     */
    public StreamAuthenticationException in(String where) {
        return new StreamAuthenticationException(where + ": " + getMessage(), chunk, this);
    }
}
