package io.sealpipe.ctr;

import io.sealpipe.Abortable;
import io.sealpipe.AesKey;
import io.sealpipe.Parallelism;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.CiphertextSink;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.HeapRegions;
import io.sealpipe.internal.StreamState;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/**
 * Encrypts what is written to it with AES-CTR and passes the ciphertext on to the wrapped
 * stream or channel; made by {@link CtrStreams#encrypt}. Also a {@link WritableByteChannel}.
 *
 * <p>Large writes are encrypted straight from the caller's array into the output buffer; small
 * writes are gathered as plaintext in the buffer and encrypted together. {@link #flush()}
 * encrypts and passes on everything buffered. {@link #close()} flushes, closes the wrapped
 * stream (unless {@code closeUnderlying(false)}), frees the cipher and zeroes the buffer, even if
 * a step fails; it is idempotent. After a failure of any kind in the stream the stream refuses
 * further writes, and {@code close()} passes nothing more on: it releases everything and throws
 * the failure again. {@link #abort()} releases everything without passing on what is buffered
 * (see {@link Abortable}). CTR has no end mark, so a reader cannot tell a shorter output from a
 * complete one: a writer whose data stopped short must say so another way (delete the output).
 * Not thread-safe.
 *
 * <p>With {@link CtrStreams.Builder#parallelism parallelism} above 1, writes of 256 KiB or more
 * are encrypted by this thread and shared workers together, each on its own counter range (see
 * {@link Parallelism}); the bytes are the same. {@code close()} waits for the workers.
 */
public final class CryptoOutputStream extends OutputStream implements WritableByteChannel, Abortable {
    /** Writes shorter than this are copied and encrypted later together (per-call cost). */
    private static final int SMALL_WRITE = 256;
    /** The buffer of large writes with workers: as GcmParallelWriter's batches, never a humongous object. */
    private static final int WIDE_BUFFER = HeapRegions.SEALED_CHUNK_BATCH * 16384;

    private final CiphertextSink sink;
    private final StreamCipher cipher;
    private final boolean closeUnderlying;
    private final CtrStreams params;
    private AesKey key;         // kept for the workers' ciphers until they are made (parallelism > 1)
    private CtrJob job;         // large writes with workers, made at the first one
    private CtrJob.Runner own;  // this stream's cipher as a runner of the job
    private byte[] wide;        // where large writes are encrypted to, with workers
    private final byte[] buffer;
    private int encrypted; // buffer[0, encrypted): ciphertext waiting to be written
    private int filled;    // buffer[encrypted, filled): plaintext waiting to be encrypted
    private long position;
    private final StreamState state = new StreamState("encryption");
    private final byte[] one = new byte[1];

    CryptoOutputStream(CiphertextSink sink, CtrStreams params) {
        this.sink = sink;
        this.closeUnderlying = params.closeUnderlying();
        this.buffer = new byte[params.bufferSize()];
        this.position = params.streamOffset();
        this.params = params;
        AesKey copy = params.keyCopy();
        try {
            this.cipher = params.newCipher(copy, position);
        } catch (RuntimeException | Error e) {
            copy.destroy(); // no stream: nothing will close it
            throw e;
        }
        if (params.parallelism() > 1) {
            key = copy; // for the workers' ciphers, made at the first large write
        } else {
            copy.destroy(); // the engine keeps its own copy in the cipher context
        }
    }

    /**
     * Stream position of the next byte written, as Hadoop's {@code getPos()}.
     *
     * @return the stream offset plus the bytes written so far
     */
    public long getPos() {
        return position;
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
            if (len < SMALL_WRITE) {
                if (buffer.length - filled < len) {
                    drain();
                }
                System.arraycopy(b, off, buffer, filled, len);
                filled += len;
                position += len;
                return;
            }
            if (len >= CtrJob.MIN_RUN && (key != null || job != null)) {
                writeWide(b, off, len);
                return;
            }
            encryptPending();
            while (len > 0) {
                int n = Math.min(len, buffer.length - filled);
                cipher.update(b, off, n, buffer, filled);
                filled += n;
                encrypted = filled;
                off += n;
                len -= n;
                position += n;
                if (filled == buffer.length) {
                    writeOut();
                }
            }
        } catch (Throwable t) {
            throw state.fail(t);
        }
    }

    /**
     * A large write with workers: encrypted from the caller's array into a buffer of up to 1008 KiB in
     * parts, each on its own counter range, then passed on.
     */
    private void writeWide(byte[] b, int off, int len) throws IOException {
        drain();
        if (job == null) {
            job = params.newJob(key);
            key.destroy();
            key = null;
            own = new CtrJob.Runner(cipher);
            wide = new byte[WIDE_BUFFER];
        }
        while (len > 0) {
            int n = Math.min(len, wide.length);
            job.run(own, position, b, off, n, wide, 0);
            sink.write(wide, 0, n);
            position += n;
            off += n;
            len -= n;
        }
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        state.check();
        int n = src.remaining();
        if (src.hasArray()) {
            write(src.array(), src.arrayOffset() + src.position(), n);
            src.position(src.limit());
            return n;
        }
        // Direct or read-only: copy into the buffer as plaintext, encrypt there.
        try {
            while (src.hasRemaining()) {
                if (filled == buffer.length) {
                    drain();
                }
                int k = Math.min(src.remaining(), buffer.length - filled);
                src.get(buffer, filled, k);
                filled += k;
                position += k;
            }
        } catch (Throwable t) {
            throw state.fail(t);
        }
        return n;
    }

    /** Encrypts and passes on everything buffered, then flushes the wrapped stream. */
    @Override
    public void flush() throws IOException {
        state.check();
        try {
            drain();
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
     * Passes on everything buffered and releases the stream; after a failure it only releases,
     * and throws the failure again (see the class comment).
     */
    @Override
    public void close() throws IOException {
        if (!state.close()) {
            return;
        }
        Closer closer = new Closer();
        if (state.failedOrAborted()) {
            closer.fail(state.unfinished("the output"));
        } else {
            closer.run(() -> state.run(() -> {
                drain();
                if (!closeUnderlying) {
                    sink.flush();
                }
            }));
        }
        if (job != null) {
            for (CtrJob.Runner r : job.shutdownAndDrain()) { // waits for the workers first
                closer.run(r.cipher::close);
            }
            CtrStreams.zero(wide);
        }
        if (key != null) {
            key.destroy();
        }
        if (closeUnderlying) {
            closer.run(sink::close);
        }
        closer.run(cipher::close);
        CtrStreams.zero(buffer);
        closer.rethrow();
    }

    /**
     * Abandons the output: releases everything as {@code close()} does but drops what is
     * buffered instead of passing it on (see {@link Abortable}).
     */
    @Override
    public void abort() {
        state.abandon(this);
    }

    private void encryptPending() {
        if (filled > encrypted) {
            cipher.update(buffer, encrypted, filled - encrypted, buffer, encrypted);
            encrypted = filled;
        }
    }

    private void drain() throws IOException {
        encryptPending();
        writeOut();
    }

    private void writeOut() throws IOException {
        if (filled > 0) {
            sink.write(buffer, 0, filled);
            filled = 0;
            encrypted = 0;
        }
    }
}
