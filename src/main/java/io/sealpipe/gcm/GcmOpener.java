package io.sealpipe.gcm;

import static io.sealpipe.gcm.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.HEADER_LENGTH;
import static io.sealpipe.gcm.Cobblestone.MAX_CHUNKS;
import static io.sealpipe.gcm.Cobblestone.NONCE_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SALT_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SEALED_CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.TAG_LENGTH;

import io.sealpipe.AesKey;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.AeadCipher;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import javax.crypto.AEADBadTagException;
import javax.crypto.ShortBufferException;

/**
 * Decrypts and verifies one c2sp.org/chunked-encryption message from buffers handed to it, into
 * buffers handed to it: the push-style form of {@link GcmInputStream}, for adapters whose caller
 * owns both buffers (a Commons Crypto cipher under Commons Crypto's streams). Made by {@link
 * GcmStreams#opener()}.
 *
 * <p><b>It holds back the last authenticated chunk</b>: {@link #update} releases a chunk's
 * plaintext only once the chunk after it has been authenticated too, and {@link #finish} (the
 * end of the input) releases the last one after checking the final chunk. A reader that stops
 * after a known number of plaintext bytes therefore always reaches the end of the message, and
 * the check that it was not cut short, before it has all its bytes. No byte is released before
 * its chunk's tag verified.
 *
 * <p>Before consuming anything, each call checks that the output has room for all it will
 * write ({@link #updateOutputSize}, {@link #finishOutputSize}) and otherwise throws {@link
 * ShortBufferException}, having changed nothing. A failed check throws {@link
 * StreamAuthenticationException}, and every later call throws it again. Not thread-safe;
 * {@link #close()} frees the cipher and zeroes the buffers and keys.
 */
public final class GcmOpener implements AutoCloseable {
    /** Chunks opened per engine call, at most; as {@link GcmSealer#BATCH}, through arrays. */
    static final int BATCH = GcmSealer.BATCH;

    private final GcmStreams params;
    private AesKey inputKey;        // until the header is checked
    private AeadCipher cipher;      // from the header on
    private byte[] baseNonce;
    private final byte[] nonce = new byte[NONCE_LENGTH];
    private final byte[] header = new byte[HEADER_LENGTH];
    private int headerLength;
    private byte[] sealed;          // ciphertext gathered: up to BATCH chunks
    private int sealedLength;
    private byte[] plain;           // the held chunk first, then the chunks opened after it
    private boolean hasHeld;        // whether plain starts with the last authenticated chunk, not yet released
    private long nextChunk;         // the index of the first chunk in sealed
    private StreamAuthenticationException failure;
    private boolean broken;         // an engine failure: the state is unknown
    private boolean finished;
    private boolean closed;

    GcmOpener(GcmStreams params) {
        this.params = params;
        this.inputKey = params.keyCopy();
    }

    /**
     * Plaintext bytes that {@link #update} releases for {@code inputLength} more bytes of
     * ciphertext, if every chunk they complete verifies.
     *
     * @param inputLength ciphertext bytes, 0 or more
     * @return the exact count of plaintext bytes
     */
    public int updateOutputSize(int inputLength) {
        long chunks = completedChunks(inputLength);
        long released = chunks == 0 ? 0 : (hasHeld ? chunks : chunks - 1);
        return Math.toIntExact(released * CHUNK_SIZE);
    }

    /**
     * Plaintext bytes that {@link #finish} releases for {@code inputLength} more bytes of
     * ciphertext, if the message verifies: everything not released yet.
     *
     * @param inputLength ciphertext bytes, 0 or more
     * @return the exact count of plaintext bytes (0 for a message that cannot be whole)
     */
    public int finishOutputSize(int inputLength) {
        long chunks = completedChunks(inputLength);
        long rest = afterHeader(inputLength) % SEALED_CHUNK_SIZE;
        long finalPlain = Math.max(0, rest - TAG_LENGTH);
        return Math.toIntExact((hasHeld ? CHUNK_SIZE : 0) + chunks * CHUNK_SIZE + finalPlain);
    }

    /**
     * Takes all of {@code in}'s remaining ciphertext, authenticates every chunk it completes, and
     * writes to {@code out} the plaintext of each authenticated chunk that has an authenticated
     * chunk after it.
     *
     * @param in ciphertext, from its position to its limit; heap or direct
     * @param out receives plaintext at its position; must not share memory with {@code in}
     * @return the plaintext bytes written, {@link #updateOutputSize} of the input
     * @throws StreamAuthenticationException if the key commitment or a chunk fails: wrong key or
     *     context, or a modified, reordered or extended message; nothing of the failed chunk is
     *     written, nor the held chunk before it
     * @throws ShortBufferException if {@code out} has less room than that (nothing is consumed)
     * @throws IllegalStateException if the opener is finished or closed
     */
    public int update(ByteBuffer in, ByteBuffer out) throws StreamAuthenticationException, ShortBufferException {
        checkUsable(in, out);
        checkRoom(out, updateOutputSize(in.remaining()));
        int start = out.position();
        try {
            gather(in, out);
        } catch (RuntimeException | Error e) {
            broken = true;
            throw e;
        }
        return out.position() - start;
    }

    /**
     * As {@link #update}, then, the input having ended, checks the final chunk and writes the
     * plaintext still held and the final chunk's.
     *
     * @param in the last ciphertext, from its position to its limit; may be empty
     * @param out receives plaintext at its position
     * @return the plaintext bytes written, {@link #finishOutputSize} of the input
     * @throws StreamAuthenticationException if the message is truncated (shorter than its header,
     *     or ending with a full chunk or less than a tag) or any check fails as in {@link #update}
     * @throws ShortBufferException if {@code out} has less room than that (nothing is consumed)
     * @throws IllegalStateException if the opener is finished or closed
     */
    public int finish(ByteBuffer in, ByteBuffer out) throws StreamAuthenticationException, ShortBufferException {
        checkUsable(in, out);
        checkRoom(out, finishOutputSize(in.remaining()));
        int start = out.position();
        try {
            return finish(in, out, start);
        } catch (RuntimeException | Error e) {
            broken = true;
            throw e;
        }
    }

    private int finish(ByteBuffer in, ByteBuffer out, int start) throws StreamAuthenticationException {
        gather(in, out);
        if (cipher == null) {
            throw fail(Cobblestone.shortHeader(headerLength));
        }
        if (sealedLength < TAG_LENGTH) {
            throw fail(Cobblestone.missingEnd(nextChunk, sealedLength));
        }
        if (nextChunk >= MAX_CHUNKS) {
            throw fail(Cobblestone.tooManyChunks());
        }
        int at = hasHeld ? CHUNK_SIZE : 0;
        Cobblestone.chunkNonce(baseNonce, nextChunk, nonce);
        int n;
        try {
            n = cipher.open(nonce, null, sealed, 0, sealedLength, plain, at);
        } catch (AEADBadTagException e) {
            throw fail(Cobblestone.chunkFailed(nextChunk, e));
        }
        nextChunk++;
        out.put(plain, 0, at + n); // the chunk held, then the final one
        hasHeld = false;
        sealedLength = 0;
        finished = true;
        return out.position() - start;
    }

    /**
     * Whether {@link #finish} verified the whole message.
     *
     * @return {@code true} once the final chunk was authenticated and everything released
     */
    public boolean isFinished() {
        return finished;
    }

    /** Frees the cipher and zeroes the buffers and keys; idempotent. Every later call fails. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (inputKey != null) {
            inputKey.destroy();
        }
        if (cipher != null) {
            cipher.close();
        }
        for (byte[] b : new byte[][] {sealed, plain, baseNonce}) {
            if (b != null) {
                Arrays.fill(b, (byte) 0);
            }
        }
        hasHeld = false;
    }

    /** Consumes {@code in}: the header, then chunks, opened a batch at a time as soon as they are whole. */
    private void gather(ByteBuffer in, ByteBuffer out) throws StreamAuthenticationException {
        if (cipher == null) {
            int n = Math.min(in.remaining(), HEADER_LENGTH - headerLength);
            in.get(header, headerLength, n);
            headerLength += n;
            if (headerLength < HEADER_LENGTH) {
                return;
            }
            checkHeader();
        }
        while (in.hasRemaining()) {
            int n = Math.min(in.remaining(), sealed.length - sealedLength);
            in.get(sealed, sealedLength, n);
            sealedLength += n;
            int full = sealedLength / SEALED_CHUNK_SIZE;
            if (full == BATCH || (full > 0 && !in.hasRemaining())) { // a full chunk is never the final one
                openChunks(full, out);
            }
        }
    }

    /**
     * Authenticates the first {@code count} chunks gathered, behind the held chunk; on success
     * releases every chunk but the last, which is held instead.
     */
    private void openChunks(int count, ByteBuffer out) throws StreamAuthenticationException {
        if (nextChunk + count >= MAX_CHUNKS) { // full chunks are never the final one: another must follow
            throw fail(Cobblestone.tooManyChunks());
        }
        int at = hasHeld ? CHUNK_SIZE : 0;
        int opened = cipher.openChunks(baseNonce, nextChunk, sealed, 0, count, plain, at);
        if (opened < count) {
            throw fail(Cobblestone.chunkFailed(nextChunk + opened, null));
        }
        nextChunk += count;
        int last = at + (count - 1) * CHUNK_SIZE;
        out.put(plain, 0, last);
        System.arraycopy(plain, last, plain, 0, CHUNK_SIZE);
        hasHeld = true;
        int rest = sealedLength - count * SEALED_CHUNK_SIZE;
        System.arraycopy(sealed, count * SEALED_CHUNK_SIZE, sealed, 0, rest);
        sealedLength = rest;
    }

    private void checkHeader() throws StreamAuthenticationException {
        byte[] salt = Arrays.copyOfRange(header, 0, SALT_LENGTH);
        Cobblestone.MessageKeys keys = params.derive(inputKey, salt);
        try {
            if (!keys.commitmentMatches(header, SALT_LENGTH)) {
                throw fail(Cobblestone.commitmentMismatch());
            }
            cipher = params.newCipher(keys.key);
            baseNonce = keys.baseNonce.clone();
            sealed = new byte[BATCH * SEALED_CHUNK_SIZE];
            plain = new byte[(BATCH + 1) * CHUNK_SIZE];
        } finally {
            keys.destroy();
            inputKey.destroy();
            inputKey = null;
        }
    }

    /** Ciphertext chunks that {@code inputLength} more bytes complete. */
    private long completedChunks(int inputLength) {
        return afterHeader(inputLength) / SEALED_CHUNK_SIZE;
    }

    /** Ciphertext after the header that this opener would have gathered, with {@code inputLength} more. */
    private long afterHeader(int inputLength) {
        if (inputLength < 0) {
            throw new IllegalArgumentException("input length must not be negative: " + inputLength);
        }
        long headerRest = cipher == null ? HEADER_LENGTH - headerLength : 0;
        return sealedLength + Math.max(0, inputLength - headerRest);
    }

    private StreamAuthenticationException fail(StreamAuthenticationException e) {
        failure = e;
        if (plain != null) {
            Arrays.fill(plain, (byte) 0);
        }
        hasHeld = false;
        return e;
    }

    private void checkUsable(ByteBuffer in, ByteBuffer out) throws StreamAuthenticationException {
        Objects.requireNonNull(in, "in");
        Objects.requireNonNull(out, "out");
        if (closed) {
            throw new IllegalStateException("this opener was closed");
        }
        if (failure != null) {
            throw new StreamAuthenticationException(failure.getMessage(), failure.chunk(), failure);
        }
        if (broken) {
            throw new IllegalStateException("an earlier call failed: this opener cannot go on");
        }
        if (finished) {
            throw new IllegalStateException("the message is finished: an opener opens one message");
        }
    }

    private static void checkRoom(ByteBuffer out, int size) throws ShortBufferException {
        if (out.remaining() < size) {
            throw new ShortBufferException("the output needs room for " + size + " bytes of plaintext, and has "
                    + out.remaining());
        }
    }
}
