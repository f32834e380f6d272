package io.sealpipe.gcm;

import static io.sealpipe.gcm.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.COMMITMENT_LENGTH;
import static io.sealpipe.gcm.Cobblestone.HEADER_LENGTH;
import static io.sealpipe.gcm.Cobblestone.MAX_CHUNKS;
import static io.sealpipe.gcm.Cobblestone.NONCE_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SALT_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SEALED_CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.TAG_LENGTH;

import io.sealpipe.engine.AeadCipher;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import javax.crypto.ShortBufferException;

/**
 * Encrypts one c2sp.org/chunked-encryption message from buffers handed to it, into buffers
 * handed to it: the push-style form of {@link GcmOutputStream}, for adapters whose caller owns
 * both buffers (a Commons Crypto cipher under Commons Crypto's streams). Made by {@link
 * GcmStreams#sealer()}; the bytes are those {@link GcmOutputStream} writes.
 *
 * <p>{@link #update} consumes all its input and writes the header (on the first call) and every
 * chunk that the input completed; {@link #finish} then seals the final, shorter chunk. A
 * message whose {@code finish} was never called is incomplete, and every reader rejects it as
 * truncated. Before consuming anything, each call checks that the output has room for all it
 * will write ({@link #updateOutputSize}, {@link #finishOutputSize}) and otherwise throws
 * {@link ShortBufferException}, having changed nothing. After any other failure the sealer
 * refuses further calls. Not thread-safe; {@link #close()} frees the cipher and zeroes the
 * buffers.
 */
public final class GcmSealer implements AutoCloseable {
    private final AeadCipher cipher;
    private final byte[] baseNonce;
    private final byte[] nonce = new byte[NONCE_LENGTH];
    private byte[] header; // salt and commitment, until written; then null
    private byte[] plain;  // the chunk being filled, made when a partial chunk first needs it
    private int plainLength;
    private long nextChunk;
    private boolean finished;
    private boolean failed;
    private boolean closed;

    GcmSealer(GcmStreams params) {
        byte[] salt = params.newSalt();
        Cobblestone.MessageKeys keys = params.derive(salt);
        try {
            this.cipher = params.newCipher(keys.key);
            this.baseNonce = keys.baseNonce.clone();
            this.header = new byte[HEADER_LENGTH];
            System.arraycopy(salt, 0, header, 0, SALT_LENGTH);
            System.arraycopy(keys.commitment, 0, header, SALT_LENGTH, COMMITMENT_LENGTH);
        } finally {
            keys.destroy(); // the engine keeps its own copy of the key in the cipher context
        }
    }

    /**
     * Bytes that {@link #update} writes for {@code inputLength} more bytes of plaintext: the
     * header if not written yet, and each full chunk they complete.
     *
     * @param inputLength plaintext bytes, 0 or more
     * @return the exact count of ciphertext bytes
     */
    public int updateOutputSize(int inputLength) {
        checkLength(inputLength);
        long chunks = ((long) plainLength + inputLength) / CHUNK_SIZE;
        return Math.toIntExact((header != null ? HEADER_LENGTH : 0) + chunks * SEALED_CHUNK_SIZE);
    }

    /**
     * Bytes that {@link #finish} writes for {@code inputLength} more bytes of plaintext: the
     * header if not written yet, each full chunk, and the final chunk with its tag.
     *
     * @param inputLength plaintext bytes, 0 or more
     * @return the exact count of ciphertext bytes
     */
    public int finishOutputSize(int inputLength) {
        checkLength(inputLength);
        long rest = ((long) plainLength + inputLength) % CHUNK_SIZE;
        return Math.toIntExact(updateOutputSize(inputLength) + rest + TAG_LENGTH);
    }

    /**
     * Takes all of {@code in}'s remaining plaintext, and writes to {@code out} the header (on the
     * first call) and every chunk completed; a partial chunk stays here until it fills or {@link
     * #finish} seals it.
     *
     * @param in plaintext, from its position to its limit; heap or direct
     * @param out receives ciphertext at its position; must not share memory with {@code in}
     * @return the ciphertext bytes written, {@link #updateOutputSize} of the input
     * @throws ShortBufferException if {@code out} has less room than that (nothing is consumed)
     * @throws IllegalStateException if the sealer is finished, failed or closed
     * @throws IllegalArgumentException if the message would pass the format's 2^38 chunks
     */
    public int update(ByteBuffer in, ByteBuffer out) throws ShortBufferException {
        checkUsable(in, out);
        int size = updateOutputSize(in.remaining());
        checkRoom(out, size);
        try {
            int start = out.position();
            writeHeader(out);
            seal(in, out);
            return out.position() - start;
        } catch (RuntimeException | Error e) {
            failed = true;
            throw e;
        }
    }

    /**
     * As {@link #update}, then seals the final chunk (the bytes left, 0 to 16383 of them): the
     * message is complete. The sealer takes no more input.
     *
     * @param in the last plaintext, from its position to its limit; may be empty
     * @param out receives ciphertext at its position
     * @return the ciphertext bytes written, {@link #finishOutputSize} of the input
     * @throws ShortBufferException if {@code out} has less room than that (nothing is consumed)
     * @throws IllegalStateException if the sealer is finished, failed or closed
     */
    public int finish(ByteBuffer in, ByteBuffer out) throws ShortBufferException {
        checkUsable(in, out);
        int size = finishOutputSize(in.remaining());
        checkRoom(out, size);
        try {
            int start = out.position();
            writeHeader(out);
            seal(in, out);
            Cobblestone.chunkNonce(baseNonce, nextChunk, nonce);
            cipher.seal(nonce, null, ByteBuffer.wrap(plain == null ? new byte[0] : plain, 0, plainLength), out);
            nextChunk++;
            plainLength = 0;
            finished = true;
            return out.position() - start;
        } catch (RuntimeException | Error e) {
            failed = true;
            throw e;
        }
    }

    /**
     * Whether {@link #finish} completed the message.
     *
     * @return {@code true} once the final chunk was written
     */
    public boolean isFinished() {
        return finished;
    }

    /** Frees the cipher and zeroes the buffers; idempotent. Every later call fails. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            cipher.close();
            if (plain != null) {
                Arrays.fill(plain, (byte) 0);
            }
            Arrays.fill(baseNonce, (byte) 0);
            Arrays.fill(nonce, (byte) 0);
            header = null;
            plainLength = 0;
        }
    }

    private void writeHeader(ByteBuffer out) {
        if (header != null) {
            out.put(header);
            header = null;
        }
    }

    /** Whole chunks straight from {@code in}; the rest through {@code plain}. */
    private void seal(ByteBuffer in, ByteBuffer out) {
        while (in.hasRemaining()) {
            if (plainLength == 0 && in.remaining() >= CHUNK_SIZE) {
                int limit = in.limit();
                in.limit(in.position() + CHUNK_SIZE);
                try {
                    sealChunk(in, out);
                } finally {
                    in.limit(limit);
                }
                continue;
            }
            if (plain == null) {
                plain = new byte[CHUNK_SIZE];
            }
            int n = Math.min(in.remaining(), CHUNK_SIZE - plainLength);
            in.get(plain, plainLength, n);
            plainLength += n;
            if (plainLength == CHUNK_SIZE) { // a full chunk is never the final one: seal it now
                sealChunk(ByteBuffer.wrap(plain), out);
                plainLength = 0;
            }
        }
    }

    private void sealChunk(ByteBuffer chunk, ByteBuffer out) {
        if (nextChunk >= MAX_CHUNKS - 1) { // keep an index for the final chunk
            throw new IllegalArgumentException("message too long: the format allows at most 2^38 chunks (4 PiB)");
        }
        Cobblestone.chunkNonce(baseNonce, nextChunk, nonce);
        cipher.seal(nonce, null, chunk, out);
        nextChunk++;
    }

    private void checkUsable(ByteBuffer in, ByteBuffer out) {
        Objects.requireNonNull(in, "in");
        Objects.requireNonNull(out, "out");
        if (closed) {
            throw new IllegalStateException("this sealer was closed");
        }
        if (failed) {
            throw new IllegalStateException("an earlier call failed: the message cannot be completed");
        }
        if (finished) {
            throw new IllegalStateException("the message is finished: a sealer seals one message");
        }
    }

    private static void checkRoom(ByteBuffer out, int size) throws ShortBufferException {
        if (out.remaining() < size) {
            throw new ShortBufferException("the output needs room for " + size + " bytes of ciphertext, and has "
                    + out.remaining());
        }
    }

    private static void checkLength(int inputLength) {
        if (inputLength < 0) {
            throw new IllegalArgumentException("input length must not be negative: " + inputLength);
        }
    }
}
