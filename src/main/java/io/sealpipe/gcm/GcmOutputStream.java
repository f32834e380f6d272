package io.sealpipe.gcm;

import static io.sealpipe.gcm.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.HEADER_LENGTH;
import static io.sealpipe.gcm.Cobblestone.MAX_CHUNKS;
import static io.sealpipe.gcm.Cobblestone.NONCE_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SALT_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SEALED_CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.TAG_LENGTH;

import io.sealpipe.Abortable;
import io.sealpipe.AesKey;
import io.sealpipe.Parallelism;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.CiphertextSink;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.ResourcePool;
import io.sealpipe.internal.StreamState;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.Arrays;
import java.util.List;

/**
 * Encrypts what is written to it into one c2sp.org/chunked-encryption message; made by
 * {@link GcmStreams#encrypt}. Also a {@link WritableByteChannel}.
 *
 * <p>Every full 16 KiB chunk is sealed as soon as it is complete; large writes are sealed
 * straight from the caller's array, several chunks per engine call. {@link #flush()} passes on
 * every sealed chunk (and the header) but cannot pass on a partial chunk: only {@link #close()}
 * may end the message, by sealing the final, shorter chunk. <b>A message that is not closed is
 * incomplete</b> and every reader rejects it as truncated.
 *
 * <p>{@code close()} writes the final chunk, flushes, closes the wrapped stream (unless
 * {@code closeUnderlying(false)}), frees the cipher and zeroes the buffers, even if a step
 * fails; it is idempotent. After a failure of any kind in the stream (the engine, the wrapped
 * stream, a helper thread) the stream refuses further writes, and {@code close()} does not end
 * the message: it releases everything and throws the failure again.
 *
 * <p><b>{@code close()} cannot see a failure outside the stream</b>, such as the source of the
 * data failing inside a try-with-resources block: it ends the message, and a reader accepts the
 * shorter message. Where the data can stop short, call {@link #abort()} on failure (see {@link
 * Abortable} for the pattern): the message is left truncated and every reader rejects it.
 * Not thread-safe.
 *
 * <p>With {@link GcmStreams.Builder#parallelism parallelism} above 1, once the message passes
 * its first MiB, chunks are sealed in batches by this thread and shared workers together (see
 * {@link Parallelism}); the bytes written are the same. {@code close()} waits for the workers.
 */
public final class GcmOutputStream extends OutputStream implements WritableByteChannel, Abortable {
    /** Sealed chunks gathered before they are passed on: up to this many per engine call. */
    static final int CHUNKS_PER_WRITE = 4;

    /** Plaintext written before a stream with parallelism above 1 brings in workers. */
    static final long PARALLEL_AFTER = 1 << 20;

    private final CiphertextSink sink;
    private final boolean closeUnderlying;
    private final GcmStreams params;
    private final AeadCipher cipher;
    private AesKey messageKey;        // kept for the workers' ciphers until they are made (parallelism > 1)
    private GcmParallelWriter parallel; // the sealing once workers help, else null
    private final byte[] baseNonce;
    private final byte[] nonce = new byte[NONCE_LENGTH];
    private final byte[] plain = new byte[CHUNK_SIZE]; // the chunk being filled
    private int plainLength;
    private final byte[] sealed; // ciphertext waiting to be passed on, from the header on
    private int sealedLength;
    private long nextChunk;
    private long written;
    private final StreamState state = new StreamState("encryption");
    private final byte[] one = new byte[1];

    GcmOutputStream(CiphertextSink sink, GcmStreams params) {
        this.sink = sink;
        this.closeUnderlying = params.closeUnderlying();
        this.params = params;
        this.sealed = new byte[HEADER_LENGTH + CHUNKS_PER_WRITE * SEALED_CHUNK_SIZE];
        byte[] salt = params.newSalt();
        Cobblestone.MessageKeys keys = params.derive(salt);
        try {
            this.cipher = params.newCipher(keys.key);
            this.baseNonce = keys.baseNonce.clone();
            this.messageKey = params.parallelism() > 1 ? AesKey.copyOf(keys.key) : null;
            System.arraycopy(salt, 0, sealed, 0, SALT_LENGTH);
            System.arraycopy(keys.commitment, 0, sealed, SALT_LENGTH, Cobblestone.COMMITMENT_LENGTH);
            sealedLength = HEADER_LENGTH;
        } finally {
            keys.destroy(); // the engine keeps its own copy of the key in the cipher context
        }
    }

    /**
     * Plaintext bytes written so far.
     *
     * @return the count of bytes accepted by the write methods, sealed or still buffered
     */
    public long plaintextWritten() {
        return written;
    }

    @Override
    public void write(int b) throws IOException {
        one[0] = (byte) b;
        write(one, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        state.check();
        Checks.range("b", b, off, len);
        try {
            if (goParallel(len)) {
                parallel.write(b, off, len);
                written += len;
                return;
            }
            while (len > 0) {
                if (plainLength == 0 && len >= CHUNK_SIZE) {
                    // Whole chunks straight from the caller's array into the sealed buffer.
                    int room = (sealed.length - sealedLength) / SEALED_CHUNK_SIZE;
                    if (room == 0) {
                        drain();
                        continue;
                    }
                    int count = Math.min(room, len / CHUNK_SIZE);
                    sealChunks(b, off, count);
                    off += count * CHUNK_SIZE;
                    len -= count * CHUNK_SIZE;
                    written += (long) count * CHUNK_SIZE;
                    continue;
                }
                int n = Math.min(len, CHUNK_SIZE - plainLength);
                System.arraycopy(b, off, plain, plainLength, n);
                plainLength += n;
                off += n;
                len -= n;
                written += n;
                sealIfFull();
            }
        } catch (Throwable t) {
            throw state.fail(t);
        }
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        int n = src.remaining();
        if (src.hasArray()) {
            write(src.array(), src.arrayOffset() + src.position(), n);
            src.position(src.position() + n);
            return n;
        }
        state.check();
        try {
            if (goParallel(n)) {
                parallel.write(src);
                written += n;
                return n;
            }
            while (src.hasRemaining()) { // a direct buffer: copied into the chunk being filled
                int k = Math.min(src.remaining(), CHUNK_SIZE - plainLength);
                src.get(plain, plainLength, k);
                plainLength += k;
                written += k;
                sealIfFull();
            }
        } catch (Throwable t) {
            throw state.fail(t);
        }
        return n;
    }

    /**
     * Whether this write goes to the parallel writer: with parallelism above 1, from the first
     * MiB of plaintext on. The switch passes everything sealed so far on and hands the chunk
     * being filled over, so the bytes written stay those of the sequential stream.
     */
    private boolean goParallel(long len) throws IOException {
        if (parallel != null) {
            return true;
        }
        if (messageKey == null || written + len < PARALLEL_AFTER) {
            return false;
        }
        drain();
        int helpers = 2 * (params.parallelism() - 1); // two batches may be sealed at once
        List<AeadCipher> helperCiphers = params.newCiphers(messageKey, helpers);
        try {
            parallel = new GcmParallelWriter(sink, cipher, new ResourcePool<>(helperCiphers), params.executor(),
                    baseNonce, params.parallelism(), nextChunk, plain, plainLength);
        } catch (RuntimeException | Error e) { // an OutOfMemoryError for its batches: close() would not reach the ciphers
            Closer.closeAfter(e, helperCiphers);
            throw e;
        }
        messageKey.destroy();
        messageKey = null;
        Arrays.fill(plain, (byte) 0);
        plainLength = 0;
        return true;
    }

    /** A full chunk is never the final one (that is always shorter): seal it now. */
    private void sealIfFull() throws IOException {
        if (plainLength == CHUNK_SIZE) {
            if (sealed.length - sealedLength < SEALED_CHUNK_SIZE) {
                drain();
            }
            sealChunks(plain, 0, 1);
            plainLength = 0;
        }
    }

    private void sealChunks(byte[] in, int off, int count) throws IOException {
        if (nextChunk > MAX_CHUNKS - count - 1) { // keep an index for the final chunk
            throw new IOException("message too long: the format allows at most 2^38 chunks (4 PiB)");
        }
        cipher.sealChunks(baseNonce, nextChunk, in, off, count, sealed, sealedLength);
        nextChunk += count;
        sealedLength += count * SEALED_CHUNK_SIZE;
    }

    /** Passes every sealed byte on. */
    private void drain() throws IOException {
        if (sealedLength > 0) {
            sink.write(sealed, 0, sealedLength);
            sealedLength = 0;
        }
    }

    /**
     * Passes on the header and every sealed chunk, then flushes the wrapped stream. A partial
     * chunk stays buffered: it can only be sealed when it fills or at {@link #close()}.
     */
    @Override
    public void flush() throws IOException {
        state.check();
        try {
            if (parallel != null) {
                parallel.sealWholeChunks();
            } else {
                drain();
            }
            sink.flush();
        } catch (Throwable t) {
            throw state.fail(t);
        }
    }

    @Override
    public boolean isOpen() {
        return state.isOpen();
    }

    /**
     * Seals the final chunk, passes everything on and releases the stream; after a failure it
     * only releases, and throws the failure again (see the class comment).
     */
    @Override
    public void close() throws IOException {
        if (!state.close()) {
            return;
        }
        Closer closer = new Closer();
        if (state.failedOrAborted()) {
            closer.fail(state.unfinished("the message"));
        } else {
            closer.run(() -> state.run(this::finish));
        }
        if (parallel != null) {
            parallel.close(closer); // waits for the workers first
        }
        if (closeUnderlying) {
            closer.run(sink::close);
        }
        closer.run(cipher::close);
        if (messageKey != null) {
            messageKey.destroy();
        }
        Arrays.fill(plain, (byte) 0);
        Arrays.fill(sealed, (byte) 0);
        Arrays.fill(baseNonce, (byte) 0);
        plainLength = sealedLength = 0;
        closer.rethrow();
    }

    /**
     * Abandons the message: releases everything as {@code close()} does but never seals the
     * final chunk, so readers reject what was written as truncated (see {@link Abortable}).
     */
    @Override
    public void abort() {
        state.abandon(this);
    }

    private void finish() throws IOException {
        if (parallel != null) {
            parallel.finish();
            sink.flush();
            return;
        }
        if (sealed.length - sealedLength < plainLength + TAG_LENGTH) {
            drain();
        }
        Cobblestone.chunkNonce(baseNonce, nextChunk, nonce);
        sealedLength += cipher.seal(nonce, null, plain, 0, plainLength, sealed, sealedLength);
        nextChunk++;
        drain();
        sink.flush();
    }
}
