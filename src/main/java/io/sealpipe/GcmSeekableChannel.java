package io.sealpipe;

import static io.sealpipe.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.Cobblestone.HEADER_LENGTH;
import static io.sealpipe.Cobblestone.NONCE_LENGTH;
import static io.sealpipe.Cobblestone.SALT_LENGTH;
import static io.sealpipe.Cobblestone.SEALED_CHUNK_SIZE;

import io.sealpipe.engine.AeadCipher;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.Closer;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;
import javax.crypto.AEADBadTagException;

/**
 * Random access to a c2sp.org/chunked-encryption message in a {@link SeekableByteChannel} (such
 * as a {@code FileChannel}); made by {@link GcmStreams#open}. Read-only.
 *
 * <p>The key commitment is checked when the channel is opened. A read decrypts and verifies
 * only the chunks it touches and returns nothing of a chunk that fails
 * ({@link StreamAuthenticationException}, naming the chunk). {@link #size()} is the plaintext
 * length, authenticated by decrypting the final chunk first; reading up to the end does the
 * same before it returns -1, so a truncated or extended message never reads as a clean, shorter
 * one. A part of a damaged message that lies in intact chunks can still be read.
 *
 * <p>{@link #read(ByteBuffer)} and {@link #position(long)} are for one thread at a time; the
 * positioned reads ({@link #read(ByteBuffer, long)}, {@link #read(long, byte[], int, int)},
 * {@link #readFully(long, byte[], int, int)}) do not move the position and may be called from
 * several threads at once (each uses a cipher of its own from a small pool). The wrapped
 * channel must not change while this one is open.
 */
public final class GcmSeekableChannel implements SeekableByteChannel {
    private final SeekableByteChannel channel;
    private final GcmStreams params;
    private final long start;            // channel position of the salt
    private final long ciphertextLength; // from start to the channel's end, when opened
    private final long plaintextSize;    // what that length must hold, or -1 if no message has it
    private final long finalChunk;       // index of the final (short) chunk
    private final byte[] messageKey;
    private final Object keyLock = new Object(); // close() zeroes messageKey and new readers copy it under this
    private final byte[] baseNonce;
    /** Idle readers for positioned reads, one per thread reading at once (more are made, and closed, as needed). */
    private final AtomicReferenceArray<ChunkReader> readers = new AtomicReferenceArray<>(16);
    private final ChunkReader sequential; // for read(ByteBuffer); keeps its last chunk
    private volatile boolean lengthAuthenticated;
    private long position;
    private final StreamState state = new StreamState("decryption");

    GcmSeekableChannel(SeekableByteChannel channel, GcmStreams params) throws IOException {
        this.channel = channel;
        this.params = params;
        this.start = channel.position();
        this.ciphertextLength = channel.size() - start;
        this.plaintextSize = Cobblestone.plaintextLength(ciphertextLength);
        this.finalChunk = plaintextSize < 0 ? -1 : plaintextSize / CHUNK_SIZE;

        byte[] header = new byte[HEADER_LENGTH];
        int got = readAt(start, ByteBuffer.wrap(header), HEADER_LENGTH);
        if (got < HEADER_LENGTH) {
            throw new StreamAuthenticationException("truncated message: " + got + " bytes, shorter than the "
                    + HEADER_LENGTH + "-byte header (salt and key commitment)", -1);
        }
        Cobblestone.MessageKeys keys = params.derive(Arrays.copyOf(header, SALT_LENGTH));
        try {
            if (!keys.commitmentMatches(header, SALT_LENGTH)) {
                throw new StreamAuthenticationException("the key commitment does not match: wrong key or context,"
                        + " or a modified header; no chunk was decrypted", -1);
            }
            this.messageKey = keys.key.clone();
            this.baseNonce = keys.baseNonce.clone();
        } finally {
            keys.destroy();
        }
        try {
            this.sequential = new ChunkReader();
        } catch (IOException | RuntimeException | Error e) {
            Arrays.fill(messageKey, (byte) 0); // no channel: nothing will close it
            throw e;
        }
    }

    /** A cipher and buffers for one read at a time, with the chunk it decrypted last. */
    private final class ChunkReader {
        final AeadCipher cipher;
        final byte[] sealed = new byte[SEALED_CHUNK_SIZE];
        final ByteBuffer sealedView = ByteBuffer.wrap(sealed); // for the channel, made once
        final byte[] plain = new byte[CHUNK_SIZE];
        final byte[] nonce = new byte[NONCE_LENGTH];
        private ByteBuffer callerView; // over the last caller's array read into, made again only for another array
        private byte[] callerArray;
        long chunk = -1; // which chunk plain holds, or -1
        int length;

        /**
         * Makes the cipher from a copy of the message key taken under {@link #keyLock}, so
         * close() cannot zero the key halfway through (the engine is not called under the lock).
         *
         * @throws ClosedChannelException if close() has begun: no reader from a zeroed key
         */
        ChunkReader() throws ClosedChannelException {
            byte[] key;
            synchronized (keyLock) {
                state.checkOpen();
                key = messageKey.clone();
            }
            try {
                cipher = params.newCipher(key);
            } finally {
                Arrays.fill(key, (byte) 0);
            }
        }

        /** Decrypts and verifies chunk {@code index} into {@link #plain}, unless it is there already. */
        void load(long index) throws IOException {
            if (chunk == index) {
                return;
            }
            chunk = -1;
            int sealedLength = index == finalChunk
                    ? (int) (ciphertextLength - Cobblestone.chunkOffset(index))
                    : SEALED_CHUNK_SIZE;
            int got = readAt(start + Cobblestone.chunkOffset(index), sealedView, sealedLength);
            if (got < sealedLength) {
                throw new StreamAuthenticationException("chunk " + index + " is cut short: the channel shrank to "
                        + (Cobblestone.chunkOffset(index) + got) + " bytes while open", index);
            }
            Cobblestone.chunkNonce(baseNonce, index, nonce);
            try {
                length = cipher.open(nonce, null, sealed, 0, sealedLength, plain, 0);
            } catch (AEADBadTagException e) {
                throw new StreamAuthenticationException("chunk " + index + " (plaintext bytes from " + index * CHUNK_SIZE
                        + ") failed authentication: the ciphertext was modified, truncated or reordered", index, e);
            }
            chunk = index;
            if (index == finalChunk) {
                lengthAuthenticated = true;
            }
        }

        /** {@code b[off, off + len)} as a buffer, without allocating while the caller keeps its array. */
        ByteBuffer view(byte[] b, int off, int len) {
            if (callerArray != b) {
                callerView = ByteBuffer.wrap(b);
                callerArray = b;
            }
            callerView.limit(off + len).position(off);
            return callerView;
        }

        void close() {
            callerView = null;
            callerArray = null;
            cipher.close();
            Arrays.fill(plain, (byte) 0);
            chunk = -1;
        }
    }

    /** Reads up to {@code length} bytes at channel position {@code at} into {@code dst} from its start; fewer only at the channel's end. */
    private int readAt(long at, ByteBuffer dst, int length) throws IOException {
        dst.limit(length).position(0);
        while (dst.hasRemaining()) {
            int n;
            if (channel instanceof FileChannel file) {
                n = file.read(dst, at + dst.position()); // FileChannel's positioned read is thread-safe
            } else {
                synchronized (channel) {
                    long saved = channel.position();
                    try {
                        channel.position(at + dst.position());
                        n = channel.read(dst);
                    } finally {
                        channel.position(saved);
                    }
                }
            }
            if (n < 0) {
                break;
            }
        }
        return dst.position();
    }

    /**
     * The plaintext length, authenticated: the first call decrypts and verifies the final
     * chunk.
     *
     * @throws StreamAuthenticationException if the ciphertext length is not that of any message
     *     (truncated or extended) or the final chunk fails
     */
    @Override
    public long size() throws IOException {
        state.checkOpen();
        authenticateLength();
        return plaintextSize;
    }

    private void authenticateLength() throws IOException {
        if (lengthAuthenticated) {
            return;
        }
        if (plaintextSize < 0) {
            throw new StreamAuthenticationException("the ciphertext is " + ciphertextLength
                    + " bytes, which no message encrypts to: it was truncated or extended", -1);
        }
        ChunkReader reader = borrow();
        try {
            reader.load(finalChunk);
        } finally {
            giveBack(reader);
        }
    }

    @Override
    public synchronized int read(ByteBuffer dst) throws IOException {
        state.checkOpen();
        int n = read(dst, position, sequential);
        if (n > 0) {
            position += n;
        }
        return n;
    }

    /**
     * Reads into {@code dst} from plaintext position {@code position} without moving this
     * channel's position; safe to call from several threads at once.
     *
     * @param dst receives the plaintext at its position, up to its limit
     * @param position plaintext offset of the first byte, 0 or more
     * @return the bytes read (0 only if {@code dst} has no room), or -1 if {@code position} is
     *     at or past the (authenticated) end
     * @throws StreamAuthenticationException if a chunk read fails authentication, or the
     *     message length is not authentic
     * @throws IOException if this channel is closed or the wrapped channel fails
     * @throws IllegalArgumentException if {@code position} is negative
     */
    public int read(ByteBuffer dst, long position) throws IOException {
        state.checkOpen();
        if (position < 0) {
            throw new IllegalArgumentException("position must be >= 0, not " + position);
        }
        ChunkReader reader = borrow();
        try {
            return read(dst, position, reader);
        } finally {
            giveBack(reader);
        }
    }

    /**
     * As {@link #read(ByteBuffer, long)} into {@code b[off, off + len)}: does not move this
     * channel's position; safe to call from several threads at once.
     *
     * @param position plaintext offset of the first byte, 0 or more
     * @param b receives the plaintext
     * @param off where to write in {@code b}
     * @param len the most bytes to read
     * @return the bytes read (0 only if {@code len} is 0), or -1 if {@code position} is at or
     *     past the (authenticated) end
     * @throws StreamAuthenticationException if a chunk read fails authentication, or the
     *     message length is not authentic
     * @throws IOException if this channel is closed or the wrapped channel fails
     * @throws IllegalArgumentException if {@code position} is negative
     */
    public int read(long position, byte[] b, int off, int len) throws IOException {
        state.checkOpen();
        Checks.range("b", b, off, len);
        if (position < 0) {
            throw new IllegalArgumentException("position must be >= 0, not " + position);
        }
        ChunkReader reader = borrow();
        try {
            return read(reader.view(b, off, len), position, reader);
        } finally {
            giveBack(reader);
        }
    }

    /**
     * Reads exactly {@code len} bytes at plaintext position {@code position} without moving this
     * channel's position; safe to call from several threads at once.
     *
     * @param position plaintext offset of the first byte, 0 or more
     * @param b receives the plaintext
     * @param off where to write in {@code b}
     * @param len bytes to read
     * @throws EOFException if the message ends first
     * @throws StreamAuthenticationException if a chunk read fails authentication
     * @throws IOException if this channel is closed or the wrapped channel fails
     */
    public void readFully(long position, byte[] b, int off, int len) throws IOException {
        Checks.range("b", b, off, len);
        int done = 0;
        while (done < len) {
            int n = read(position + done, b, off + done, len - done);
            if (n < 0) {
                throw new EOFException("the message ends before position " + (position + len) + " (read "
                        + done + " of " + len + " bytes at " + position + ")");
            }
            done += n;
        }
    }

    private int read(ByteBuffer dst, long from, ChunkReader reader) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        if (plaintextSize < 0 || from >= plaintextSize) {
            authenticateLength(); // throws if the length is not authentic
            return -1;
        }
        int total = 0;
        long at = from;
        while (dst.hasRemaining() && at < plaintextSize) {
            long index = at / CHUNK_SIZE;
            int inChunk = (int) (at % CHUNK_SIZE);
            reader.load(index);
            int n = Math.min(dst.remaining(), reader.length - inChunk);
            dst.put(reader.plain, inChunk, n);
            total += n;
            at += n;
        }
        return total;
    }

    /**
     * An idle reader, or a new one. If close() begins while a new one is made, it is closed and
     * the read fails as closed (the reader itself is sound: its key was copied before the zeroing).
     */
    private ChunkReader borrow() throws ClosedChannelException {
        for (int i = 0; i < readers.length(); i++) {
            ChunkReader r = readers.getAndSet(i, null);
            if (r != null) {
                return r;
            }
        }
        ChunkReader r = new ChunkReader();
        if (!state.isOpen()) {
            r.close();
            throw new AsynchronousCloseException();
        }
        return r;
    }

    private void giveBack(ChunkReader reader) {
        if (state.isOpen()) {
            for (int i = 0; i < readers.length(); i++) {
                if (readers.compareAndSet(i, null, reader)) {
                    if (!state.isOpen()) {
                        close(i); // close() may have emptied the slots before this one was filled
                    }
                    return;
                }
            }
        }
        reader.close(); // closed, or more readers than slots
    }

    private void close(int slot) {
        ChunkReader r = readers.getAndSet(slot, null);
        if (r != null) {
            r.close();
        }
    }

    @Override
    public synchronized long position() throws IOException {
        state.checkOpen();
        return position;
    }

    /** Moves to plaintext position {@code newPosition}; past the end the next read returns -1. */
    @Override
    public synchronized GcmSeekableChannel position(long newPosition) throws IOException {
        state.checkOpen();
        if (newPosition < 0) {
            throw new IllegalArgumentException("position must be >= 0, not " + newPosition);
        }
        position = newPosition;
        return this;
    }

    /** Not supported: the channel is read-only. */
    @Override
    public int write(ByteBuffer src) {
        throw new NonWritableChannelException();
    }

    /** Not supported: the channel is read-only. */
    @Override
    public SeekableByteChannel truncate(long size) {
        throw new NonWritableChannelException();
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
            closer.run(channel::close);
        }
        synchronized (this) {
            closer.run(sequential::close);
        }
        for (int i = 0; i < readers.length(); i++) {
            ChunkReader r = readers.getAndSet(i, null);
            if (r != null) {
                closer.run(r::close);
            }
        }
        synchronized (keyLock) {
            Arrays.fill(messageKey, (byte) 0);
        }
        closer.rethrow();
    }

}
