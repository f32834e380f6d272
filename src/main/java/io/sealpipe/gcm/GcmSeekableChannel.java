package io.sealpipe.gcm;

import static io.sealpipe.gcm.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.HEADER_LENGTH;
import static io.sealpipe.gcm.Cobblestone.NONCE_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SALT_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SEALED_CHUNK_SIZE;

import io.sealpipe.PositionedInput;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.StreamState;
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
import java.util.concurrent.atomic.LongAdder;
import javax.crypto.AEADBadTagException;

/**
 * Random access to a c2sp.org/chunked-encryption message in a {@link SeekableByteChannel} (such
 * as a {@code FileChannel}) or a {@link PositionedInput} (such as a Hadoop
 * {@code FSDataInputStream}); made by {@link GcmStreams#open}. Read-only.
 *
 * <p>The key commitment is checked when the channel is opened. A read decrypts and verifies
 * only the chunks it touches and returns nothing of a chunk that fails
 * ({@link StreamAuthenticationException}, naming the chunk). {@link #size()} is the plaintext
 * length, authenticated by decrypting the final chunk first; reading up to the end does the
 * same before it returns -1, so a truncated or extended message never reads as a clean, shorter
 * one. A part of a damaged message that lies in intact chunks can still be read, and so can the
 * whole chunks of a message whose length no message has (cut short, or still being written):
 * each is authenticated as it is read, and reading past them fails as truncated.
 *
 * <p>Decrypted chunks are kept in a small cache shared by all reads (by default
 * {@value #DEFAULT_CACHED_CHUNKS} chunks of 16 KiB, the least recently used replaced; zeroed on
 * close), so small reads near each other decrypt each chunk once. {@link #read(ByteBuffer)}
 * opens whole chunks straight into the caller's array, several per engine call and without the
 * cache (a chunk that fails there leaves its part of the array zeroed); positioned reads
 * never write a byte of a failed chunk into the caller's buffer.
 *
 * <p>{@link #read(ByteBuffer)} and {@link #position(long)} are for one thread at a time; the
 * positioned reads ({@link #read(ByteBuffer, long)}, {@link #read(long, byte[], int, int)},
 * {@link #readFully(long, byte[], int, int)}) do not move the position and may be called from
 * several threads at once (each uses a cipher of its own from a small pool). The wrapped
 * channel or input must not change while this one is open.
 */
public final class GcmSeekableChannel implements SeekableByteChannel {
    /** Decrypted chunks a channel keeps between reads unless {@link GcmStreams#open(PositionedInput, long, int)} says otherwise. */
    public static final int DEFAULT_CACHED_CHUNKS = 8;
    /** The most chunks one cache may keep (1 MiB of plaintext). */
    public static final int MAX_CACHED_CHUNKS = 64;
    /** Full chunks that {@link #read(ByteBuffer)} reads and opens at once when the caller's array can take them. */
    private static final int BATCH_CHUNKS = 4;

    private final Source source;
    private final GcmStreams params;
    private final long ciphertextLength; // of the whole message, salt to the end
    private final long plaintextSize;    // what that length must hold, or -1 if no message has it
    private final long finalChunk;       // index of the final (short) chunk; -1 if the length is no message's
    private final long wholeChunks;      // full chunks before the end: the final chunk's index, or an unfinished message's count
    private final long readableEnd;      // the plaintext before the end: all of it, or an unfinished message's whole chunks
    private final byte[] messageKey;
    private final Object keyLock = new Object(); // close() zeroes messageKey and new readers copy it under this
    private final byte[] baseNonce;
    /** Idle readers for positioned reads, one per thread reading at once (more are made, and closed, as needed). */
    private final AtomicReferenceArray<ChunkReader> readers = new AtomicReferenceArray<>(16);
    private final ChunkReader sequential; // for read(ByteBuffer); keeps its current chunk
    private final ChunkCache cache;
    private final LongAdder chunksOpened = new LongAdder();
    private volatile boolean lengthAuthenticated;
    private long position;
    private final StreamState state = new StreamState("decryption");

    GcmSeekableChannel(Source source, long ciphertextLength, int cachedChunks, GcmStreams params) throws IOException {
        if (cachedChunks < 0 || cachedChunks > MAX_CACHED_CHUNKS) {
            throw new IllegalArgumentException("cachedChunks must be 0.." + MAX_CACHED_CHUNKS + ", not " + cachedChunks);
        }
        if (ciphertextLength < 0) {
            throw new IllegalArgumentException("length must be >= 0, not " + ciphertextLength);
        }
        this.source = source;
        this.params = params;
        this.ciphertextLength = ciphertextLength;
        this.plaintextSize = Cobblestone.plaintextLength(ciphertextLength);
        this.finalChunk = plaintextSize < 0 ? -1 : plaintextSize / CHUNK_SIZE;
        this.wholeChunks = plaintextSize >= 0 ? finalChunk : Math.max(0, ciphertextLength - HEADER_LENGTH) / SEALED_CHUNK_SIZE;
        this.readableEnd = plaintextSize >= 0 ? plaintextSize : wholeChunks * CHUNK_SIZE;
        this.cache = new ChunkCache(cachedChunks);

        byte[] header = new byte[HEADER_LENGTH];
        int got = ciphertextLength < HEADER_LENGTH ? (int) ciphertextLength : source.readNext(0, ByteBuffer.wrap(header));
        if (got < HEADER_LENGTH) {
            throw Cobblestone.shortHeader(got);
        }
        Cobblestone.MessageKeys keys = params.derive(Arrays.copyOf(header, SALT_LENGTH));
        try {
            if (!keys.commitmentMatches(header, SALT_LENGTH)) {
                throw Cobblestone.commitmentMismatch();
            }
            this.messageKey = keys.key.clone();
            this.baseNonce = keys.baseNonce.clone();
        } finally {
            keys.destroy();
        }
        try {
            this.sequential = new ChunkReader(BATCH_CHUNKS);
        } catch (IOException | RuntimeException | Error e) {
            Arrays.fill(messageKey, (byte) 0); // no channel: nothing will close it
            throw e;
        }
    }

    /** Where the ciphertext is, addressed from the message's first byte (the salt). */
    interface Source {
        /**
         * Reads into {@code dst} from ciphertext offset {@code at} up to its limit, stopping
         * short only at the end; safe from several threads at once.
         *
         * @return the bytes read
         */
        int readAt(long at, ByteBuffer dst) throws IOException;

        /** The same for the channel's own position-moving reads (and the header), one thread at a time. */
        int readNext(long at, ByteBuffer dst) throws IOException;

        /** Closes what the source reads from, if the channel owns it. */
        void close() throws IOException;

        /** A channel from its current position; positioned reads on a {@code FileChannel}, else under a lock. */
        static Source of(SeekableByteChannel channel, boolean closeUnderlying) throws IOException {
            long start = channel.position();
            return new Source() {
                @Override
                public int readAt(long at, ByteBuffer dst) throws IOException {
                    int first = dst.position();
                    while (dst.hasRemaining()) {
                        long from = start + at + dst.position() - first;
                        int n;
                        if (channel instanceof FileChannel file) {
                            n = file.read(dst, from); // FileChannel's positioned read is thread-safe
                        } else {
                            synchronized (channel) {
                                long saved = channel.position();
                                try {
                                    channel.position(from);
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
                    return dst.position() - first;
                }

                @Override
                public int readNext(long at, ByteBuffer dst) throws IOException {
                    return readAt(at, dst);
                }

                @Override
                public void close() throws IOException {
                    if (closeUnderlying) {
                        channel.close();
                    }
                }
            };
        }

        /** Positioned reads for {@link #readAt}, {@link PositionedInput#readSequentially} for {@link #readNext}; nothing to close. */
        static Source of(PositionedInput in) {
            return new Source() {
                @Override
                public int readAt(long at, ByteBuffer dst) throws IOException {
                    return fill(at, dst, false);
                }

                @Override
                public int readNext(long at, ByteBuffer dst) throws IOException {
                    return fill(at, dst, true);
                }

                private int fill(long at, ByteBuffer dst, boolean sequentially) throws IOException {
                    int first = dst.position();
                    while (dst.hasRemaining()) {
                        long from = at + dst.position() - first;
                        int offset = dst.arrayOffset() + dst.position();
                        int n = sequentially
                                ? in.readSequentially(from, dst.array(), offset, dst.remaining())
                                : in.read(from, dst.array(), offset, dst.remaining());
                        if (n < 0) {
                            break;
                        }
                        dst.position(dst.position() + n); // 0 breaks the input's contract: ask again
                    }
                    return dst.position() - first;
                }

                @Override
                public void close() {
                    // the caller closes what the input reads from
                }
            };
        }
    }

    /** A cipher and buffers for one read at a time, with the chunk it decrypted last. */
    private final class ChunkReader {
        final AeadCipher cipher;
        final byte[] sealed;
        final ByteBuffer sealedView; // for the source, made once
        byte[] plain = new byte[CHUNK_SIZE]; // swapped with the cache's arrays
        final byte[] nonce = new byte[NONCE_LENGTH];
        private ByteBuffer callerView; // over the last caller's array read into, made again only for another array
        private byte[] callerArray;
        long chunk = -1; // which chunk plain holds, or -1
        int length;

        /**
         * Makes the cipher from a copy of the message key taken under {@link #keyLock}, so
         * close() cannot zero the key halfway through (the engine is not called under the lock).
         *
         * @param batch how many full chunks {@link #openInto} may open at once
         * @throws ClosedChannelException if close() has begun: no reader from a zeroed key
         */
        ChunkReader(int batch) throws ClosedChannelException {
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
            sealed = new byte[batch * SEALED_CHUNK_SIZE];
            sealedView = ByteBuffer.wrap(sealed);
        }

        int batch() {
            return sealed.length / SEALED_CHUNK_SIZE;
        }

        /** Decrypts and verifies chunk {@code index} into {@link #plain}, unless it is there already. */
        void load(long index, boolean next) throws IOException {
            if (chunk == index) {
                return;
            }
            chunk = -1;
            int sealedLength = index == finalChunk
                    ? (int) (ciphertextLength - Cobblestone.chunkOffset(index))
                    : SEALED_CHUNK_SIZE;
            readSealed(index, sealedLength, next);
            Cobblestone.chunkNonce(baseNonce, index, nonce);
            try {
                length = cipher.open(nonce, null, sealed, 0, sealedLength, plain, 0);
            } catch (AEADBadTagException e) {
                throw failed(index, e);
            }
            chunk = index;
            chunksOpened.increment();
            if (index == finalChunk) {
                lengthAuthenticated = true;
            }
        }

        /**
         * Opens full chunks {@code index .. index + count - 1} (none of them the final chunk,
         * {@code count <= batch()}) straight into {@code out}, read from the source at once and
         * opened in one engine call. A chunk that fails has its part of {@code out} zeroed.
         *
         * @return the plaintext bytes written: {@code count * 16384}, or fewer if a later chunk
         *     failed (the next read meets it)
         * @throws StreamAuthenticationException if chunk {@code index} fails
         */
        int openInto(long index, int count, byte[] out, int outOffset, boolean next) throws IOException {
            readSealed(index, count * SEALED_CHUNK_SIZE, next);
            int opened = cipher.openChunks(baseNonce, index, sealed, 0, count, out, outOffset);
            chunksOpened.add(opened);
            if (opened == 0) {
                throw failed(index, null);
            }
            return opened * CHUNK_SIZE;
        }

        private void readSealed(long index, int sealedLength, boolean next) throws IOException {
            sealedView.limit(sealedLength).position(0);
            long at = Cobblestone.chunkOffset(index);
            int got = next ? source.readNext(at, sealedView) : source.readAt(at, sealedView);
            if (got < sealedLength) {
                throw new StreamAuthenticationException("chunk " + (index + got / SEALED_CHUNK_SIZE)
                        + " is cut short: the input ends at " + (at + got) + " bytes, not the " + ciphertextLength
                        + " it had when opened", index + got / SEALED_CHUNK_SIZE);
            }
        }

        /** Hands the chunk in {@link #plain} to the cache and takes an array to decrypt into next. */
        void offer() {
            if (chunk >= 0) {
                byte[] next = cache.keep(chunk, plain, length);
                plain = next != null ? next : new byte[CHUNK_SIZE];
                chunk = -1;
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

    private static StreamAuthenticationException failed(long index, AEADBadTagException cause) {
        return Cobblestone.chunkFailed(index, cause);
    }

    /**
     * Decrypted chunks kept between reads, the least recently used replaced; guarded by itself.
     * Readers hand their arrays over ({@link #keep}) instead of copying them.
     */
    private static final class ChunkCache {
        private final long[] chunks;
        private final byte[][] plains;
        private final int[] lengths;
        private final long[] lastUse;
        private long clock;
        private boolean closed;

        ChunkCache(int capacity) {
            chunks = new long[capacity];
            Arrays.fill(chunks, -1);
            plains = new byte[capacity][];
            lengths = new int[capacity];
            lastUse = new long[capacity];
        }

        /**
         * Copies chunk {@code index} from {@code from} into {@code dst} (as much as fits), if
         * it is here.
         *
         * @return the bytes copied, or -1 if the chunk is not here
         */
        synchronized int copy(long index, int from, ByteBuffer dst) {
            for (int i = 0; i < chunks.length; i++) {
                if (chunks[i] == index) {
                    lastUse[i] = ++clock;
                    int n = Math.min(dst.remaining(), lengths[i] - from);
                    dst.put(plains[i], from, n);
                    return n;
                }
            }
            return -1;
        }

        /**
         * Keeps {@code plain} (chunk {@code index}, {@code length} bytes) in place of the least
         * recently used chunk.
         *
         * @return the array the caller decrypts into next: the replaced one, {@code plain}
         *     itself if it is not kept, or null (the caller makes one)
         */
        synchronized byte[] keep(long index, byte[] plain, int length) {
            if (closed || chunks.length == 0) {
                return plain;
            }
            int slot = 0;
            for (int i = 0; i < chunks.length; i++) {
                if (chunks[i] == index) {
                    lastUse[i] = ++clock;
                    return plain; // another reader kept it first
                }
                if (lastUse[i] < lastUse[slot]) {
                    slot = i; // an empty slot has lastUse 0: it goes first
                }
            }
            byte[] replaced = plains[slot];
            plains[slot] = plain;
            chunks[slot] = index;
            lengths[slot] = length;
            lastUse[slot] = ++clock;
            return replaced;
        }

        /** Zeroes and drops every chunk; later {@link #keep} calls keep nothing. */
        synchronized void close() {
            closed = true;
            for (int i = 0; i < chunks.length; i++) {
                if (plains[i] != null) {
                    Arrays.fill(plains[i], (byte) 0);
                    plains[i] = null;
                }
                chunks[i] = -1;
            }
        }
    }

    /**
     * How many chunks this channel has decrypted and verified so far; reads served by the
     * cache do not count. Against the bytes read, the cost of a read pattern (16384 bytes
     * decrypted per chunk).
     *
     * @return the count, from 0
     */
    public long chunksOpened() {
        return chunksOpened.sum();
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
            reader.load(finalChunk, false);
        } finally {
            giveBack(reader);
        }
    }

    @Override
    public synchronized int read(ByteBuffer dst) throws IOException {
        state.checkOpen();
        int n = read(dst, position, sequential, true);
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
            return read(dst, position, reader, false);
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
            return read(reader.view(b, off, len), position, reader, false);
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

    /**
     * Where chunk {@code index} starts in the ciphertext, counted from the message's first byte.
     * With {@link #sealedLength} and {@link #openChunk}, for callers that read the ciphertext
     * themselves: a Hadoop vectored read lets the wrapped file system fetch the chunks of many
     * ranges at once (an object store in parallel requests), then opens each chunk here.
     *
     * @param index the chunk, 0 or more; chunk {@code i} holds plaintext bytes from {@code i * 16384}
     * @return the offset of its first sealed byte
     */
    public static long sealedOffset(long index) {
        if (index < 0) {
            throw new IllegalArgumentException("index must be >= 0, not " + index);
        }
        return Cobblestone.chunkOffset(index);
    }

    /**
     * The sealed length of chunk {@code index} of this message: 16400 bytes, or the final
     * chunk's own.
     *
     * @param index the chunk, 0 or more
     * @return its sealed length in bytes, its tag included
     * @throws StreamAuthenticationException if the message has no such chunk: past its final
     *     chunk, or past the whole chunks of a message whose length no message has (cut short,
     *     or still being written)
     */
    public int sealedLength(long index) throws StreamAuthenticationException {
        if (index < 0) {
            throw new IllegalArgumentException("index must be >= 0, not " + index);
        }
        if (index == finalChunk) {
            return (int) (ciphertextLength - Cobblestone.chunkOffset(index));
        }
        if (index < wholeChunks) {
            return SEALED_CHUNK_SIZE;
        }
        if (plaintextSize < 0) {
            throw new StreamAuthenticationException("chunk " + index + " is cut short: the message is " + ciphertextLength
                    + " bytes, which no message encrypts to, and holds " + wholeChunks + " whole chunks before it ends",
                    index);
        }
        throw new StreamAuthenticationException("chunk " + index + " lies past the final chunk (" + finalChunk + ")", index);
    }

    /**
     * Decrypts and verifies chunk {@code index} from its sealed bytes, read by the caller from
     * {@link #sealedOffset} ({@link #sealedLength} bytes), into {@code plain}; safe to call from
     * several threads at once. Nothing is written to {@code plain} if the chunk fails. The
     * final chunk, once it verifies here, authenticates the message's length as a read of it
     * would.
     *
     * @param index the chunk, 0 or more
     * @param sealed holds the chunk's sealed bytes from {@code sealedOffset}
     * @param sealedOffset where they start in {@code sealed}
     * @param plain receives up to 16384 plaintext bytes from {@code plainOffset}
     * @param plainOffset where to write them in {@code plain}
     * @return the plaintext bytes written: 16384, or the final chunk's length
     * @throws StreamAuthenticationException if the chunk fails authentication or the message has
     *     no such chunk
     * @throws IOException if this channel is closed
     */
    public int openChunk(long index, byte[] sealed, int sealedOffset, byte[] plain, int plainOffset) throws IOException {
        state.checkOpen();
        int sealedLength = sealedLength(index);
        Checks.range("sealed", sealed, sealedOffset, sealedLength);
        Checks.range("plain", plain, plainOffset, sealedLength - Cobblestone.TAG_LENGTH);
        ChunkReader reader = borrow();
        try {
            reader.chunk = -1; // the reader's buffer is not used: it keeps no chunk from here
            Cobblestone.chunkNonce(baseNonce, index, reader.nonce);
            int n;
            try {
                n = reader.cipher.open(reader.nonce, null, sealed, sealedOffset, sealedLength, reader.plain, 0);
                System.arraycopy(reader.plain, 0, plain, plainOffset, n);
            } catch (AEADBadTagException e) {
                throw failed(index, e);
            } finally {
                Arrays.fill(reader.plain, (byte) 0); // verified or not, the copy is the caller's now
            }
            chunksOpened.increment();
            if (index == finalChunk) {
                lengthAuthenticated = true;
            }
            return n;
        } finally {
            giveBack(reader);
        }
    }

    /**
     * Reads from plaintext position {@code from}: the reader's own chunk, the cache, whole
     * chunks straight into an array, or one chunk decrypted into the reader and copied.
     *
     * @param next whether this is the channel's position-moving read (the sequential reader,
     *     which keeps its current chunk and reads the source with {@link Source#readNext})
     */
    private int read(ByteBuffer dst, long from, ChunkReader reader, boolean next) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        if (from >= readableEnd) {
            authenticateLength(); // throws if the length is not authentic
            return -1;
        }
        // With a length no message has (cut short, or still being written), the whole chunks
        // before the end read as in any message; the end fails as truncated above.
        int total = 0;
        long at = from;
        while (dst.hasRemaining() && at < readableEnd) {
            long index = at / CHUNK_SIZE;
            int inChunk = (int) (at % CHUNK_SIZE);
            int n;
            if (reader.chunk == index) {
                n = copy(reader, inChunk, dst);
            } else if ((n = cache.copy(index, inChunk, dst)) >= 0) {
                // kept from an earlier read
            } else if (next && inChunk == 0 && index < wholeChunks && dst.hasArray() && dst.remaining() >= CHUNK_SIZE) {
                int count = (int) Math.min(Math.min(dst.remaining() / CHUNK_SIZE, reader.batch()), wholeChunks - index);
                n = reader.openInto(index, count, dst.array(), dst.arrayOffset() + dst.position(), next);
                dst.position(dst.position() + n);
                if (n < count * CHUNK_SIZE) {
                    return total + n; // the chunk after these failed: the next read reports it
                }
            } else {
                if (next) {
                    reader.offer(); // the sequential reader's previous chunk
                }
                reader.load(index, next);
                n = copy(reader, inChunk, dst);
                if (!next) {
                    reader.offer();
                }
            }
            total += n;
            at += n;
        }
        return total;
    }

    private static int copy(ChunkReader reader, int inChunk, ByteBuffer dst) {
        int n = Math.min(dst.remaining(), reader.length - inChunk);
        dst.put(reader.plain, inChunk, n);
        return n;
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
        ChunkReader r = new ChunkReader(1);
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
        closer.run(source::close);
        synchronized (this) {
            closer.run(sequential::close);
        }
        for (int i = 0; i < readers.length(); i++) {
            ChunkReader r = readers.getAndSet(i, null);
            if (r != null) {
                closer.run(r::close);
            }
        }
        cache.close();
        synchronized (keyLock) {
            Arrays.fill(messageKey, (byte) 0);
        }
        closer.rethrow();
    }

}
