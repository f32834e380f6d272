package io.sealpipe.ctr;

import io.sealpipe.AesKey;
import io.sealpipe.Parallelism;
import io.sealpipe.PositionedInput;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.CiphertextSource;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.KeyAccess;
import io.sealpipe.internal.StreamState;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ReadableByteChannel;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Decrypts an AES-CTR stream as it is read; made by {@link CtrStreams#decrypt}. Also a
 * {@link ReadableByteChannel}.
 *
 * <p>Over a {@code SeekableByteChannel}, a {@code ByteBuffer} or a {@link PositionedInput} it can
 * {@link #seek(long)} and serve positioned reads ({@link #read(long, byte[], int, int)},
 * {@link #readFully(long, byte[], int, int)}), as Hadoop's {@code Seekable} and
 * {@code PositionedReadable}. Positioned reads do not move the
 * stream position and may be called from several threads at once (each uses a cipher context
 * of its own from a small pool); everything else is for one thread at a time.
 *
 * <p>Large reads are read into the caller's array and decrypted there; small reads are served
 * from a buffer. With {@link CtrStreams.Builder#parallelism parallelism} above 1, reads of 256
 * KiB or more are decrypted by this thread and shared workers together, each on its own counter
 * range (see {@link Parallelism}); {@code close()} waits for the workers. <b>CTR detects no tampering</b>: a modified ciphertext decrypts to modified
 * plaintext without an error.
 */
public final class CryptoInputStream extends InputStream implements ReadableByteChannel {
    /**
     * Reads at least this long, or half the buffer if that is less, (and not served from the buffer) go straight into the caller's
     * array and are decrypted there: one copy fewer than through the buffer. Shorter reads are
     * served from a bufferful, so a byte-at-a-time reader does not cost a call per byte.
     */
    private static final int DIRECT_READ = 4096;
    private final CiphertextSource source;
    private final CtrStreams params;
    private final StreamCipher cipher;
    private final byte[] buffer;
    private final int directRead;
    private final byte[] scratch = new byte[16];
    private final AesKey key; // this stream's own copy, for positioned-read ciphers; zeroed on close
    private final Object keyLock = new Object(); // close() zeroes the key and positioned reads copy it under this
    private CtrJob job;          // large reads with workers (parallelism > 1), made at the first one
    private CtrJob.Runner own;   // this stream's cipher as a runner of the job
    private final long streamOffset;
    private final long sourceStart; // source position holding stream position streamOffset
    private final ConcurrentLinkedQueue<PositionedCipher> positionedCiphers = new ConcurrentLinkedQueue<>();
    private int pos;   // buffer[pos, limit): decrypted bytes not yet returned
    private int limit;
    private long position;
    private final StreamState state = new StreamState("decryption");

    CryptoInputStream(CiphertextSource source, CtrStreams params) {
        this.source = source;
        this.params = params;
        this.buffer = new byte[params.bufferSize()];
        this.directRead = Math.min(DIRECT_READ, buffer.length / 2);
        this.streamOffset = params.streamOffset();
        this.position = streamOffset;
        long start = 0;
        if (source.seekable()) {
            try {
                start = source.position();
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read the channel's position: " + e.getMessage(), e);
            }
        }
        this.sourceStart = start;
        this.key = params.keyCopy();
        try {
            this.cipher = params.newCipher(key, position);
        } catch (RuntimeException | Error e) {
            key.destroy(); // no stream: nothing will close it
            throw e;
        }
    }

    /**
     * Stream position of the next byte {@link #read()} returns, as Hadoop's {@code getPos()}.
     *
     * @return the stream offset, moved on by every read and skip and set by {@link #seek}
     */
    public long getPos() {
        return position;
    }

    @Override
    public int read() throws IOException {
        state.checkOpen();
        if (pos == limit && fill() < 0) {
            return -1;
        }
        position++;
        return buffer[pos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        state.checkOpen();
        Checks.range("b", b, off, len);
        if (len == 0) {
            return 0;
        }
        if (pos == limit) {
            if (len >= directRead) {
                // Large read: decrypted straight into the caller's array.
                int n = len >= CtrJob.MIN_RUN && params.parallelism() > 1 && !source.inMemory()
                        ? readWide(b, off, len)
                        : source.readDecrypted(cipher, b, off, len);
                if (n < 0) {
                    return -1;
                }
                position += n;
                pos = limit = 0; // the buffer no longer holds the bytes just before position
                return n;
            }
            if (fill() < 0) {
                return -1;
            }
        }
        int n = Math.min(len, limit - pos);
        System.arraycopy(buffer, pos, b, off, n);
        pos += n;
        position += n;
        return n;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        state.checkOpen();
        if (!dst.hasRemaining()) {
            return 0;
        }
        if (dst.hasArray()) {
            int n = read(dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
            if (n > 0) {
                dst.position(dst.position() + n);
            }
            return n;
        }
        if (pos == limit && fill() < 0) {
            return -1;
        }
        int n = Math.min(dst.remaining(), limit - pos);
        dst.put(buffer, pos, n);
        pos += n;
        position += n;
        return n;
    }

    /**
     * A large read with workers: the ciphertext is read into the caller's array and, if the
     * source gave enough of it, decrypted there in parts, each on its own counter range.
     */
    private int readWide(byte[] b, int off, int len) throws IOException {
        int n = source.read(b, off, len);
        if (n < CtrJob.MIN_RUN) {
            if (n > 0) {
                cipher.update(b, off, n, b, off);
            }
            return n;
        }
        if (job == null) {
            job = params.newJob(key);
            own = new CtrJob.Runner(cipher);
        }
        job.run(own, position, b, off, n, b, off);
        return n;
    }

    /** Reads the next bufferful of ciphertext and decrypts it; -1 at the end. */
    private int fill() throws IOException {
        int n = source.readDecrypted(cipher, buffer, 0, buffer.length);
        if (n < 0) {
            pos = limit = 0;
            return -1;
        }
        pos = 0;
        limit = n;
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        state.checkOpen();
        if (n <= 0) {
            return 0;
        }
        long fromBuffer = Math.min(n, limit - pos);
        pos += (int) fromBuffer;
        position += fromBuffer;
        long rest = n - fromBuffer;
        if (rest > 0) {
            long skipped = source.skip(rest);
            if (skipped > 0) {
                position += skipped;
                pos = limit = 0; // the buffer no longer holds the bytes just before position
                params.seek(cipher, position, scratch);
            }
            return fromBuffer + skipped;
        }
        return fromBuffer;
    }

    @Override
    public int available() throws IOException {
        state.checkOpen();
        return (int) Math.min(Integer.MAX_VALUE, (limit - pos) + source.available());
    }

    /**
     * Whether {@link #seek} and positioned reads are available.
     *
     * @return true over a {@code SeekableByteChannel}, a {@code ByteBuffer} or a
     *     {@link PositionedInput}; false over an {@code InputStream} or another channel
     */
    public boolean isSeekable() {
        return source.seekable();
    }

    /**
     * Moves to stream position {@code newPosition} (at least the stream offset; past the end the
     * next read returns -1).
     *
     * @param newPosition the stream position to read next
     * @throws IllegalArgumentException if {@code newPosition} is before the stream offset
     * @throws IOException if this stream is closed or the wrapped channel fails to seek
     * @throws UnsupportedOperationException if the stream was built over an {@code InputStream} or
     *     a channel that is not a {@code SeekableByteChannel}
     */
    public void seek(long newPosition) throws IOException {
        state.checkOpen();
        checkSeekable();
        if (newPosition < streamOffset) {
            throw new IllegalArgumentException("cannot seek to " + newPosition + ", before the stream offset " + streamOffset);
        }
        long bufferStart = position - pos; // stream position of buffer[0]
        if (newPosition >= bufferStart && newPosition <= bufferStart + limit) {
            pos = (int) (newPosition - bufferStart); // inside what is already decrypted
            position = newPosition;
            return;
        }
        source.seek(sourceStart + (newPosition - streamOffset));
        pos = limit = 0;
        position = newPosition;
        params.seek(cipher, newPosition, scratch);
    }

    /**
     * Reads up to {@code length} bytes at stream position {@code position} without moving the
     * stream; safe to call from several threads at once.
     *
     * @param position the stream position of the first byte, at least the stream offset
     * @param b receives the plaintext
     * @param off where to write in {@code b}
     * @param length the most bytes to read
     * @return the bytes read (0 only if {@code length} is 0), or -1 if {@code position} is at
     *     or past the end
     * @throws IOException if this stream is closed or the wrapped input fails
     * @throws UnsupportedOperationException if the stream is not {@link #isSeekable() seekable}
     * @throws IllegalArgumentException if {@code position} is before the stream offset
     */
    public int read(long position, byte[] b, int off, int length) throws IOException {
        state.checkOpen();
        checkSeekable();
        Checks.range("b", b, off, length);
        if (position < streamOffset) {
            throw new IllegalArgumentException("position " + position + " is before the stream offset " + streamOffset);
        }
        if (length == 0) {
            return 0;
        }
        int n = source.readAt(sourceStart + (position - streamOffset), b, off, length);
        if (n > 0) {
            decryptAt(position, b, off, n);
        }
        return n;
    }

    /**
     * Reads exactly {@code length} bytes at stream position {@code position} without moving the
     * stream; safe to call from several threads at once.
     *
     * @param position the stream position of the first byte, at least the stream offset
     * @param b receives the plaintext
     * @param off where to write in {@code b}
     * @param length bytes to read
     * @throws EOFException if the stream ends first
     * @throws IOException if this stream is closed or the wrapped input fails
     * @throws UnsupportedOperationException if the stream is not {@link #isSeekable() seekable}
     */
    public void readFully(long position, byte[] b, int off, int length) throws IOException {
        Checks.range("b", b, off, length);
        int done = 0;
        while (done < length) {
            int n = read(position + done, b, off + done, length - done);
            if (n < 0) {
                throw new EOFException("stream ends before position " + (position + length) + " (read "
                        + done + " of " + length + " bytes at " + position + ")");
            }
            done += n;
        }
    }

    /**
     * {@link #readFully(long, byte[], int, int)} for the whole array.
     *
     * @param position the stream position of the first byte, at least the stream offset
     * @param b filled with the plaintext
     * @throws EOFException if the stream ends first
     * @throws IOException if this stream is closed or the wrapped input fails
     */
    public void readFully(long position, byte[] b) throws IOException {
        readFully(position, b, 0, b.length);
    }

    /** A cipher context of its own for one positioned read at a time, with its scratch block. */
    private record PositionedCipher(StreamCipher cipher, byte[] scratch) {}

    private void decryptAt(long position, byte[] b, int off, int n) throws IOException {
        PositionedCipher c = borrowCipher(position);
        try {
            c.cipher().update(b, off, n, b, off);
        } finally {
            giveBack(c);
        }
    }

    /**
     * An idle positioned cipher moved to {@code position}, or a new one. A new one is made from a
     * copy of the key taken under {@link #keyLock}, so close() cannot zero the key halfway through;
     * if close() has begun by the time it is made, it is closed and the read fails as closed
     * rather than decrypt with a key that close() zeroed.
     */
    private PositionedCipher borrowCipher(long position) throws IOException {
        PositionedCipher c = positionedCiphers.poll();
        if (c != null) {
            try {
                params.seek(c.cipher(), position, c.scratch());
            } catch (RuntimeException | Error e) {
                Closer.closeAfter(e, List.of(c.cipher())); // not given back: its state is unknown
                throw e;
            }
            return c;
        }
        AesKey copy;
        synchronized (keyLock) {
            state.checkOpen();
            copy = KeyAccess.copy(key);
        }
        byte[] scratch = new byte[16]; // before the cipher: nothing is allocated between making it and keeping it
        StreamCipher cipher;
        try {
            cipher = params.newCipher(copy, position);
        } finally {
            copy.destroy();
        }
        try {
            c = new PositionedCipher(cipher, scratch);
        } catch (RuntimeException | Error e) { // an OutOfMemoryError
            Closer.closeAfter(e, List.of(cipher));
            throw e;
        }
        if (!state.isOpen()) {
            c.cipher().close();
            throw new AsynchronousCloseException();
        }
        return c;
    }

    /**
     * Returns {@code c} to the pool. It is added first and the flag read after: close() sets the
     * flag before it drains the pool, so either close() finds {@code c} or this sees the flag and
     * drains the pool itself; a cipher is never left behind (unclosed, key inside).
     */
    private void giveBack(PositionedCipher c) {
        positionedCiphers.add(c);
        if (!state.isOpen()) {
            for (PositionedCipher idle; (idle = positionedCiphers.poll()) != null; ) {
                idle.cipher().close();
            }
        }
    }

    @Override
    public boolean isOpen() {
        return state.isOpen();
    }

    @Override
    public void close() throws IOException {
        if (!state.close()) {
            return;
        }
        Closer closer = new Closer();
        if (params.closeUnderlying()) {
            closer.run(source::close);
        }
        if (job != null) {
            for (CtrJob.Runner r : job.shutdownAndDrain()) { // waits for the workers first
                closer.run(r.cipher::close);
            }
        }
        closer.run(cipher::close);
        for (PositionedCipher c; (c = positionedCiphers.poll()) != null; ) {
            closer.run(c.cipher()::close);
        }
        CtrStreams.zero(buffer);
        synchronized (keyLock) {
            key.destroy();
        }
        pos = limit = 0;
        closer.rethrow();
    }

    private void checkSeekable() {
        if (!source.seekable()) {
            throw new UnsupportedOperationException("seek and positioned reads need a seekable source: build the stream"
                    + " with CtrStreams.decrypt(ReadableByteChannel) over a SeekableByteChannel (such as a FileChannel),"
                    + " decrypt(ByteBuffer) or decrypt(PositionedInput) (for a Hadoop FSDataInputStream: decrypt(in::read))");
        }
    }
}
