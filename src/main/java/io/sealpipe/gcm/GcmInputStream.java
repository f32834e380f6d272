package io.sealpipe.gcm;

import static io.sealpipe.gcm.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.HEADER_LENGTH;
import static io.sealpipe.gcm.Cobblestone.MAX_CHUNKS;
import static io.sealpipe.gcm.Cobblestone.NONCE_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SALT_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SEALED_CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.TAG_LENGTH;

import io.sealpipe.AesKey;
import io.sealpipe.Parallelism;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.CiphertextSource;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.ResourcePool;
import io.sealpipe.internal.StreamState;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ReadableByteChannel;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import javax.crypto.AEADBadTagException;

/**
 * Decrypts and verifies one c2sp.org/chunked-encryption message as it is read; made by
 * {@link GcmStreams#decrypt}. Also a {@link ReadableByteChannel}.
 *
 * <p>Before the first chunk it checks the key commitment (a wrong key or context fails here).
 * Plaintext is released only after the chunk holding it was authenticated; reads of 16 KiB and
 * more are decrypted straight into the caller's array, and a chunk that fails leaves zeros
 * there, never unauthenticated bytes. The end of the message is the short final chunk: a
 * message cut at any point, with data after its final chunk, or with chunks dropped, repeated
 * or swapped fails with a {@link StreamAuthenticationException} naming the chunk. A read may
 * first return the chunks before the failed one (they are authentic); after a failure every
 * read, skip and available throws again (never a clean end of stream).
 *
 * <p>Errors of the wrapped stream pass through as they are and do not poison the stream. Not
 * thread-safe, but for {@code close()}, which may come from another thread: a read that races it
 * returns authentic plaintext or fails as closed ({@link ClosedChannelException}), never the
 * zeros that close() leaves in the plaintext buffer, an engine's error about a closed cipher, or
 * an error about the destroyed key. close() waits for the read's engine call or header check
 * under way (it never closes the cipher under a read) and frees what that made. For random
 * access use {@link GcmSeekableChannel}.
 *
 * <p>With {@link GcmStreams.Builder#parallelism parallelism} above 1, once the message passed
 * its first MiB, batches of up to 63 chunks (1008 KiB; 31 in a G1 heap of 1 MiB regions) are
 * opened by this thread and shared workers together (see {@link Parallelism}), and while the
 * workers open one batch this thread reads the next one from the wrapped stream (it stops early
 * once the batch is open): a read may so wait for up to about 1 MB more ciphertext than it
 * returns plaintext for. Reads shorter than a batch
 * take its plaintext from a buffer, and the read that filled the buffer also started the workers
 * on the batch after it (once it had read that batch from the source), which they open between
 * reads, while the caller is busy with the plaintext; the next read that finds the buffer empty
 * takes that batch and starts the next. The wrapped stream is read on the calling thread only,
 * never by a worker. What a read returns is the same, and so are the failures: an error of the
 * wrapped stream during that read-ahead is thrown, as it is, by the read that gets to those
 * bytes, after every authentic chunk before them was returned, and does not poison the stream
 * either. {@code close()} waits for the workers; called from
 * another thread while a read is opening a batch, it closes the wrapped stream first (which
 * ends most blocked reads), then waits for that read's batch before it frees anything, and the
 * read fails as closed. With {@link GcmStreams.Builder#closeUnderlying closeUnderlying(false)}
 * the wrapped stream stays open, so that close() waits until the read-ahead's read of the
 * wrapped stream returns: close such a stream yourself first to end a read blocked in it.
 * Between reads, {@code close()} cancels the batch started ahead, or waits for the workers
 * still opening it. A read whose read of the wrapped stream close() ended fails as closed,
 * with the wrapped stream's error as the cause.
 */
public final class GcmInputStream extends InputStream implements ReadableByteChannel {
    /** Sealed chunks read ahead: up to this many are opened per engine call. */
    static final int CHUNKS_PER_READ = 4;

    /**
     * Plaintext read before a stream with parallelism above 1 brings in workers: the writer's
     * {@link GcmOutputStream#PARALLEL_AFTER}. (256 KiB was tried, so that less of each message is
     * read on one thread: no gain measurable on the project's hosts, docs/PERFORMANCE.md.)
     */
    static final long PARALLEL_AFTER = GcmOutputStream.PARALLEL_AFTER;

    private final CiphertextSource source; // null when reading from memory
    private final ByteBuffer memory;       // the whole message in memory, or null
    private ByteBuffer memoryWindow;       // memory[sealedPos, ...) for one engine call
    private ByteBuffer dstView;            // the caller's array for that call
    private byte[] dstViewArray;
    private final GcmStreams params;
    private final AesKey inputKey; // own copy (GcmStreams.destroy() must not break us); zeroed after the header
    /**
     * Ciphertext read ahead. One byte beyond whole chunks: a full chunk can be opened only once
     * a byte after it shows it is not the final one, and with that byte in the buffer a full
     * buffer opens all its chunks and carries one byte over, instead of a whole chunk.
     */
    private byte[] sealed;
    private int sealedPos;   // sealed[sealedPos, sealedLimit): ciphertext not yet opened
    private int sealedLimit;
    private boolean sourceEnded;
    /**
     * The next batch, read from the source while workers open the batch in {@link #sealed}; the
     * two arrays swap after each batch (parallelism above 1 over a source only, else null).
     */
    private byte[] ahead;
    private int aheadLimit;  // ahead[0, aheadLimit): ciphertext after the batch being opened
    /** What the source threw during a read-ahead: thrown when a read needs the bytes after those read. */
    private Throwable sourceFailure;
    /**
     * Held by a read while it uses or makes what {@code close()} frees: while it checks the header
     * (derives the message key, makes the cipher), calls the engine, opens a batch with workers,
     * makes the workers' ciphers, and copies plaintext out of {@link #plain}; and by {@code close()}
     * before it frees the ciphers and zeroes the keys and buffers. So a close() from another
     * thread waits for that step and frees what it made, and a read that gets the lock after it
     * fails as closed instead of using a closed cipher or a destroyed key, or returning the zeros
     * close() left as data.
     */
    private final ReentrantLock closeLock = new ReentrantLock();
    /**
     * Test hook (GcmCloseRaceTest): runs on the reading thread between its check and its copy out
     * of {@link #plain}.
     */
    Runnable beforePlainCopy;
    private byte[] plain = new byte[CHUNK_SIZE];
    /**
     * The plaintext buffer that the batch opened ahead goes into, while reads take {@link #plain}
     * (parallelism above 1, reads shorter than a batch; else null).
     */
    private byte[] plainAhead;
    /**
     * Chunks of the batch being opened ahead into {@link #plainAhead}, from {@link #nextChunk}
     * on and from {@link #sealedPos} in {@link #sealed} (or the message in memory); 0 when none is.
     */
    private int chunksAhead;
    private int plainPos;    // plain[plainPos, plainLimit): authenticated plaintext not yet returned
    private int plainLimit;
    private final byte[] nonce = new byte[NONCE_LENGTH];
    private AeadCipher cipher;  // null until the header was checked
    private byte[] baseNonce;
    private long nextChunk;
    private long released;
    private boolean finished;   // the final chunk was authenticated: the message is complete
    private final StreamState state = new StreamState("decryption"); // records authentication and engine failures
    private final byte[] one = new byte[1];
    private AesKey messageKey;  // kept for the workers' ciphers until they are made (parallelism > 1)
    private ResourcePool<AeadCipher> helperCiphers;
    private ChunkJob job;       // opens batches with workers, once the message passed PARALLEL_AFTER

    GcmInputStream(CiphertextSource source, GcmStreams params) {
        this.source = source;
        this.memory = null;
        this.sealed = new byte[CHUNKS_PER_READ * SEALED_CHUNK_SIZE + 1];
        this.params = params;
        this.inputKey = params.keyCopy();
    }

    /** Over a message held in memory: chunks are opened straight from it, with no copy. */
    GcmInputStream(ByteBuffer message, GcmStreams params) {
        this.source = null;
        this.memory = message.slice();
        this.memoryWindow = memory.duplicate();
        this.sealed = new byte[0]; // nothing is copied
        this.sealedLimit = memory.limit();
        this.sourceEnded = true;
        this.params = params;
        this.inputKey = params.keyCopy();
    }

    /**
     * Plaintext bytes returned (or skipped) so far.
     *
     * @return the count, all of it authenticated
     */
    public long plaintextRead() {
        return released;
    }

    @Override
    public int read() throws IOException {
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        checkOpen();
        Checks.range("b", b, off, len);
        if (len == 0) {
            return 0;
        }
        if (plainPos < plainLimit) {
            return fromPlain(b, off, len);
        }
        while (true) {
            state.check();
            if (finished) {
                return -1;
            }
            goParallelIfDue();
            int n;
            boolean batchOrMore = len >= (job != null ? GcmParallelWriter.BATCH_CHUNKS : 1) * CHUNK_SIZE;
            if (batchOrMore && chunksAhead == 0) {
                n = openNext(b, off, len / CHUNK_SIZE); // straight into the caller's array
            } else {
                n = openIntoPlain(!batchOrMore) == 0 ? 0 : fromPlain(b, off, len);
                if (n > 0) {
                    return n; // already counted by fromPlain
                }
            }
            if (n > 0) {
                released += n;
                return n;
            }
            // n == 0: an empty final chunk (finished) or a failure: the loop answers both.
        }
    }

    private int fromPlain(byte[] b, int off, int len) throws ClosedChannelException {
        closeLock.lock();
        try {
            int n = plainToCopy(len);
            System.arraycopy(plain, plainPos, b, off, n);
            plainPos += n;
            released += n;
            return n;
        } finally {
            closeLock.unlock();
        }
    }

    private int fromPlain(ByteBuffer dst) throws ClosedChannelException {
        closeLock.lock();
        try {
            int n = plainToCopy(dst.remaining());
            dst.put(plain, plainPos, n);
            plainPos += n;
            released += n;
            return n;
        } finally {
            closeLock.unlock();
        }
    }

    /**
     * With {@link #closeLock} held, before a copy out of {@link #plain}: how many of {@code len}
     * bytes to copy, or ClosedChannelException if close() came in from another thread. close()
     * zeroes {@code plain} under the same lock, so a read either copies before it or fails here,
     * and never returns those zeros as data. On failure {@code plain} is zeroed again: close()
     * may have zeroed it while the engine was still opening this read's chunks into it.
     */
    private int plainToCopy(int len) throws ClosedChannelException {
        if (!state.isOpen()) {
            Arrays.fill(plain, (byte) 0);
            throw closed(sourceFailure);
        }
        int n = Math.min(len, plainLimit - plainPos);
        if (beforePlainCopy != null) {
            beforePlainCopy.run();
        }
        return n;
    }

    /** Test support (GcmCloseRaceTest): whether {@code thread} waits in close() for a read's copy or batch. */
    boolean closeWaits(Thread thread) {
        return closeLock.hasQueuedThread(thread);
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        checkOpen();
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
        if (plainPos == plainLimit) {
            if (fillPlain() < 0) {
                return -1;
            }
        }
        return fromPlain(dst);
    }

    /** Opens the next chunk into the plaintext buffer; -1 at the end of the message. */
    private int fillPlain() throws IOException {
        while (true) {
            state.check();
            if (finished) {
                return -1;
            }
            goParallelIfDue();
            if (openIntoPlain(true) > 0) {
                return plainLimit;
            }
        }
    }

    /**
     * Opens the next chunks into the plaintext buffer and returns how many bytes it holds (0:
     * an empty final chunk, or a failure that {@link #state} answers). With workers, and when
     * {@code openAhead}, the batch after them is started at once, for the workers to open while
     * the reader takes this one: the reads after it then find it open, or part of it.
     */
    private int openIntoPlain(boolean openAhead) throws IOException {
        plainPos = plainLimit = 0; // nothing is buffered if this throws
        if (chunksAhead > 0) {
            plainLimit = takeBatchAhead(openAhead);
        } else {
            byte[] into = plainBuffer();
            plainLimit = openNext(into, 0, into.length / CHUNK_SIZE);
            if (openAhead) {
                startBatchAhead();
            }
        }
        return plainLimit;
    }

    /**
     * The plaintext buffer, empty: one chunk long, or a whole batch once workers help (made by
     * the first read that needs it, so a stream read in large reads never makes it).
     */
    private byte[] plainBuffer() {
        if (job != null && plain.length < GcmParallelWriter.BATCH_CHUNKS * CHUNK_SIZE) {
            Arrays.fill(plain, (byte) 0);
            plain = new byte[GcmParallelWriter.BATCH_CHUNKS * CHUNK_SIZE];
        }
        return plain;
    }

    @Override
    public long skip(long n) throws IOException {
        checkOpen();
        long skipped = 0;
        while (skipped < n) {
            if (plainPos == plainLimit && fillPlain() < 0) {
                break;
            }
            int k = (int) Math.min(n - skipped, plainLimit - plainPos);
            plainPos += k;
            skipped += k;
            released += k; // counted as it goes: a later chunk may fail and throw
        }
        return skipped;
    }

    /** The authenticated plaintext bytes buffered, which a read returns without blocking. */
    @Override
    public int available() throws IOException {
        checkOpen();
        if (plainPos == plainLimit) {
            state.check();
        }
        return plainLimit - plainPos;
    }

    /**
     * Opens up to {@code maxChunks} chunks into {@code dst} and returns the plaintext bytes
     * written: full chunks while more ciphertext follows them, else the final chunk (then
     * {@link #finished} is set, and 0 bytes is an empty final chunk). On an authentication
     * failure it records the failure, and returns the chunks before the failed one, or throws
     * if there are none.
     */
    private int openNext(byte[] dst, int off, int maxChunks) throws IOException {
        checkHeader();
        int available = readSealed((job != null ? Math.min(maxChunks, GcmParallelWriter.BATCH_CHUNKS) : 1)
                * SEALED_CHUNK_SIZE + 1);
        if (available > SEALED_CHUNK_SIZE) {
            // Ciphertext follows these full chunks, so none of them is the final chunk.
            int count = Math.min(maxChunks, (available - 1) / SEALED_CHUNK_SIZE);
            if (nextChunk + count >= MAX_CHUNKS) {
                throw state.fail(Cobblestone.tooManyChunks());
            }
            int opened;
            if (job != null && count > 1) {
                opened = openBatch(count, dst, off);
            } else {
                closeLock.lock(); // a close() from another thread waits for this call, or came first
                try {
                    checkOpen();
                    opened = memory != null
                        ? cipher.openChunks(baseNonce, nextChunk, window(count * SEALED_CHUNK_SIZE),
                                view(dst, off, count * CHUNK_SIZE))
                        : cipher.openChunks(baseNonce, nextChunk, sealed, sealedPos, count, dst, off);
                } finally {
                    closeLock.unlock();
                }
                sealedPos += opened * SEALED_CHUNK_SIZE;
            }
            countOpened(opened, count);
            return opened * CHUNK_SIZE;
        }
        // The ciphertext ends within the next sealed chunk: that is the final chunk.
        if (available == SEALED_CHUNK_SIZE) {
            throw state.fail(Cobblestone.missingEnd(nextChunk + 1, 0));
        }
        if (available < TAG_LENGTH) {
            throw state.fail(Cobblestone.missingEnd(nextChunk, available));
        }
        Cobblestone.chunkNonce(baseNonce, nextChunk, nonce);
        int n;
        closeLock.lock(); // as above
        try {
            checkOpen();
            n = memory != null
                    ? cipher.open(nonce, null, window(available), view(dst, off, available - TAG_LENGTH))
                    : cipher.open(nonce, null, sealed, sealedPos, available, dst, off);
        } catch (AEADBadTagException e) {
            throw state.fail(chunkFailed(nextChunk));
        } finally {
            closeLock.unlock();
        }
        sealedPos += available;
        nextChunk++;
        finished = true;
        return n;
    }

    /**
     * Opens {@code count} full chunks from {@link #sealedPos} with the workers and, over a
     * source, reads the next batch into {@link #ahead} meanwhile, which then becomes {@link
     * #sealed}. Returns how many chunks, from the first, authenticated (see {@link
     * ChunkJob#awaitOpen}); throws {@link java.nio.channels.ClosedChannelException} if {@code
     * close()} came in from another thread meanwhile (it waits for this batch).
     */
    private int openBatch(int count, byte[] dst, int off) throws IOException {
        closeLock.lock();
        try {
            checkOpen();
            job.startOpen(nextChunk, sealed, memory, sealedPos, count, dst, off);
            return finishBatch(count);
        } finally {
            closeLock.unlock();
        }
    }

    /**
     * With {@link #closeLock} held, after the workers were started on {@code count} chunks from
     * {@link #sealedPos}: over a source, reads the next batch into {@link #ahead} meanwhile, then
     * opens what no worker took, waits for the rest and moves to the ciphertext after the batch.
     * Returns how many chunks, from the first, authenticated (see {@link ChunkJob#awaitOpen});
     * throws {@link java.nio.channels.ClosedChannelException} if {@code close()} came in from
     * another thread (it waits for this batch, whose plaintext is then not returned).
     */
    private int finishBatch(int count) throws IOException {
        checkOpen();
        if (source != null) {
            readAhead(sealedPos + count * SEALED_CHUNK_SIZE); // throws nothing: the round is always awaited
        }
        int opened;
        try {
            opened = job.awaitOpen(cipher);
        } catch (Throwable t) {
            // An engine failure: where the chunks stand is unknown, and the read-ahead is
            // already in the other buffer, so the stream cannot go on.
            throw state.fail(t);
        }
        moveToReadAhead(opened);
        checkOpen();
        return opened;
    }

    /**
     * Counts {@code opened} chunks of {@code count} as read; if one failed, records the failure
     * and throws it when none opened (else the next read throws: the authenticated chunks before
     * it are released first).
     */
    private void countOpened(int opened, int count) throws IOException {
        nextChunk += opened;
        if (opened < count) {
            StreamAuthenticationException e = chunkFailed(nextChunk);
            if (opened == 0) {
                throw state.fail(e);
            }
            state.fail(e);
        }
    }

    /**
     * After a batch: over a source, the ciphertext read ahead (its front is what followed the
     * batch) becomes {@link #sealed}; in memory, the position moves past the chunks opened.
     */
    private void moveToReadAhead(int opened) {
        if (source != null) {
            byte[] opening = sealed;
            sealed = ahead;
            ahead = opening;
            sealedPos = 0;
            sealedLimit = aheadLimit;
        } else {
            sealedPos += opened * SEALED_CHUNK_SIZE;
        }
    }

    /**
     * Starts the workers on the next whole chunks buffered (up to a batch, at least two, all
     * followed by more ciphertext, so none is the final chunk), into {@link #plainAhead}, and
     * returns without waiting; {@link #takeBatchAhead} waits for them. Starts nothing after a
     * failure, at the end, or with fewer chunks buffered (the next read opens those itself).
     */
    private void startBatchAhead() throws IOException {
        if (job == null || finished || state.failedOrAborted()) {
            return;
        }
        topUpSealed();
        int count = Math.min(GcmParallelWriter.BATCH_CHUNKS, (sealedLimit - sealedPos - 1) / SEALED_CHUNK_SIZE);
        if (count < 2 || nextChunk + count >= MAX_CHUNKS) {
            return; // openNext does these, and says what is wrong with too many chunks
        }
        closeLock.lock();
        try {
            checkOpen();
            if (plainAhead == null) {
                plainAhead = new byte[GcmParallelWriter.BATCH_CHUNKS * CHUNK_SIZE];
            }
            job.startOpen(nextChunk, sealed, memory, sealedPos, count, plainAhead, 0);
            chunksAhead = count;
        } finally {
            closeLock.unlock();
        }
    }

    /**
     * Before a batch is started ahead, over a source: reads it until {@link #sealed} holds a whole
     * batch and the byte after it, or the source ends or fails. The read-ahead during a batch stops
     * once that batch is open, which, when the workers opened it between reads, is before it read
     * anything: without this, only every other batch would be opened ahead. A failure is kept in
     * {@link #sourceFailure}, as in {@link #readAhead}: the plaintext already opened is returned
     * first.
     */
    private void topUpSealed() {
        if (source == null || sealedLimit - sealedPos >= sealed.length) {
            return;
        }
        if (sealedPos > 0) {
            System.arraycopy(sealed, sealedPos, sealed, 0, sealedLimit - sealedPos);
            sealedLimit -= sealedPos;
            sealedPos = 0;
        }
        sealedLimit = readSource(sealed, sealedLimit, false);
    }

    /**
     * Waits for the batch opened ahead (this thread opens what no worker took yet, after reading
     * the next batch from the source meanwhile), makes it the plaintext buffer and returns its
     * authenticated bytes, the chunks before a failed one (see {@link #openNext}); starts the
     * batch after it if {@code openAhead}.
     */
    private int takeBatchAhead(boolean openAhead) throws IOException {
        int count = chunksAhead;
        int opened;
        closeLock.lock();
        try {
            chunksAhead = 0;
            opened = finishBatch(count);
            byte[] taken = plainAhead;
            plainAhead = plain;
            plain = taken;
        } finally {
            closeLock.unlock();
        }
        countOpened(opened, count);
        if (openAhead) {
            startBatchAhead();
        }
        return opened * CHUNK_SIZE;
    }

    /**
     * While workers open the chunks before {@code from}: moves the ciphertext from there to the
     * front of {@link #ahead} and reads the source into it until it is full, the source ends, or
     * the batch being opened is done (then the rest is read when it is needed). A failure of the
     * source is kept in {@link #sourceFailure}, for the read that needs the bytes after those
     * read.
     */
    private void readAhead(int from) {
        aheadLimit = sealedLimit - from;
        System.arraycopy(sealed, from, ahead, 0, aheadLimit);
        aheadLimit = readSource(ahead, aheadLimit, true);
    }

    /**
     * Reads the source into {@code into} from {@code limit} until it is full, the source ends or
     * fails, or (if {@code untilBatchOpen}) the batch being opened is done; returns the new limit.
     * Throws nothing: a failure is kept in {@link #sourceFailure}, for the read that needs the
     * bytes after those read, and nothing is read once the source ended or failed.
     */
    private int readSource(byte[] into, int limit, boolean untilBatchOpen) {
        if (sourceEnded || sourceFailure != null) {
            return limit;
        }
        try {
            while (limit < into.length && !(untilBatchOpen && job.isDone())) {
                int n = source.read(into, limit, into.length - limit);
                if (n < 0) {
                    sourceEnded = true;
                    break;
                }
                limit += n;
            }
        } catch (Throwable t) { // Errors too: thrown later, as they are, like the rest
            sourceFailure = t;
        }
        return limit;
    }

    /** Throws the source's failure kept by {@link #readAhead}, once: a later read asks the source again. */
    private void throwSourceFailure() throws IOException {
        Throwable t = sourceFailure;
        sourceFailure = null;
        if (t instanceof IOException e) {
            throw e;
        }
        if (t instanceof RuntimeException e) {
            throw e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IOException("the wrapped stream failed: " + t, t);
    }

    /** {@code length} bytes of the in-memory message from {@link #sealedPos}. */
    private ByteBuffer window(int length) {
        memoryWindow.limit(sealedPos + length).position(sealedPos);
        return memoryWindow;
    }

    /** A reusable ByteBuffer over the caller's array (no allocation while the array stays the same). */
    private ByteBuffer view(byte[] b, int off, int len) {
        if (dstViewArray != b) {
            dstView = ByteBuffer.wrap(b);
            dstViewArray = b;
        }
        dstView.limit(off + len).position(off);
        return dstView;
    }

    private StreamAuthenticationException chunkFailed(long chunk) {
        return Cobblestone.chunkFailed(chunk, null);
    }

    /**
     * Reads ciphertext until at least {@code wanted} bytes are buffered or the source ends;
     * returns how many are buffered. An error of the wrapped stream after close() from another
     * thread (which closes it first, ending a read blocked in it) fails as closed, with that
     * error as the cause.
     */
    private int readSealed(int wanted) throws IOException {
        try {
            return fillSealed(wanted);
        } catch (IOException | RuntimeException e) {
            if (state.isOpen()) {
                throw e;
            }
            throw closed(e); // close() from another thread closed the wrapped stream under this read
        }
    }

    /**
     * Throws {@link ClosedChannelException} once close() has begun, with the wrapped stream's error
     * that a read-ahead kept as the cause: close() closes the wrapped stream first, which ends a
     * read blocked in it with an error.
     */
    private void checkOpen() throws ClosedChannelException {
        if (!state.isOpen()) {
            throw closed(sourceFailure);
        }
    }

    private static ClosedChannelException closed(Throwable cause) {
        ClosedChannelException closed = new ClosedChannelException();
        if (cause != null) {
            closed.initCause(cause);
        }
        return closed;
    }

    /**
     * {@link #readSealed}, whose errors of the wrapped stream it gives as they are, also after
     * close() closed that stream.
     */
    private int fillSealed(int wanted) throws IOException {
        int available = sealedLimit - sealedPos;
        if (available >= wanted || sourceEnded) {
            return available;
        }
        if (sourceFailure != null) {
            // The source failed during a read-ahead: first the whole chunks read before that
            // (a byte after them shows they are not the final chunk), then its failure.
            if (available > SEALED_CHUNK_SIZE) {
                return available;
            }
            throwSourceFailure();
        }
        if (sealedPos > 0) {
            System.arraycopy(sealed, sealedPos, sealed, 0, available);
            sealedPos = 0;
            sealedLimit = available;
        }
        while (sealedLimit - sealedPos < wanted && sealedLimit < sealed.length) {
            int n = source.read(sealed, sealedLimit, sealed.length - sealedLimit);
            if (n < 0) {
                sourceEnded = true;
                break;
            }
            sealedLimit += n;
        }
        return sealedLimit - sealedPos;
    }

    /**
     * Reads the salt and commitment and checks the commitment, once, before any chunk. The check
     * runs under {@link #closeLock}: a close() from another thread comes before it (the read
     * fails as closed, not on the input key close() destroyed) or after it, and then closes the
     * cipher made here and zeroes the message key kept for the workers.
     */
    private void checkHeader() throws IOException {
        if (cipher != null) {
            return;
        }
        int available = readSealed(HEADER_LENGTH);
        if (available < HEADER_LENGTH) {
            throw state.fail(Cobblestone.shortHeader(available));
        }
        byte[] header = new byte[HEADER_LENGTH];
        if (memory != null) {
            memory.get(sealedPos, header);
        } else {
            System.arraycopy(sealed, sealedPos, header, 0, HEADER_LENGTH);
        }
        closeLock.lock();
        try {
            checkOpen();
            Cobblestone.MessageKeys keys;
            try {
                keys = params.derive(inputKey, Arrays.copyOf(header, SALT_LENGTH));
            } finally {
                inputKey.destroy(); // from here on the message key is all this stream needs
            }
            try {
                if (!keys.commitmentMatches(header, SALT_LENGTH)) {
                    throw state.fail(Cobblestone.commitmentMismatch());
                }
                cipher = params.newCipher(keys.key);
                baseNonce = keys.baseNonce.clone();
                messageKey = params.parallelism() > 1 ? AesKey.copyOf(keys.key) : null;
            } finally {
                keys.destroy();
            }
        } finally {
            closeLock.unlock();
        }
        sealedPos += HEADER_LENGTH;
    }

    /**
     * With parallelism above 1, once the message passed {@link #PARALLEL_AFTER} and no plaintext is
     * buffered: from here on batches of chunks are read ahead and opened by this thread and
     * shared workers together. The plaintext returned is the same.
     */
    private void goParallelIfDue() throws ClosedChannelException {
        if (messageKey == null || released < PARALLEL_AFTER) {
            return;
        }
        int helpers = params.parallelism() - 1;
        closeLock.lock(); // a close() from another thread sees the job and the buffers it must free
        try {
            checkOpen(); // else close() destroyed messageKey
            // The buffers first, then the ciphers, kept at once: an OutOfMemoryError on the way
            // leaves no cipher open and the stream as it was (a later read tries again).
            byte[] bigger = source != null ? new byte[GcmParallelWriter.BATCH_CHUNKS * SEALED_CHUNK_SIZE + 1] : null;
            byte[] biggerAhead = source != null ? new byte[bigger.length] : null;
            List<AeadCipher> made = params.newCiphers(messageKey, helpers);
            try {
                ResourcePool<AeadCipher> pool = new ResourcePool<>(made);
                job = new ChunkJob(pool, params.executor(), baseNonce, params.parallelism(), memory);
                helperCiphers = pool;
            } catch (RuntimeException | Error e) {
                Closer.closeAfter(e, made);
                throw e;
            }
            messageKey.destroy();
            messageKey = null;
            if (source != null) {
                int pending = sealedLimit - sealedPos;
                System.arraycopy(sealed, sealedPos, bigger, 0, pending);
                sealed = bigger;
                sealedPos = 0;
                sealedLimit = pending;
                ahead = biggerAhead;
            }
        } finally {
            closeLock.unlock();
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
        if (params.closeUnderlying() && source != null) {
            closer.run(source::close); // first: ends a read-ahead blocked in it, which the lock below waits for
        }
        closeLock.lock(); // waits for a batch that a read on another thread is opening, or its copy out of plain
        try {
            release(closer);
        } finally {
            closeLock.unlock();
        }
        closer.rethrow();
    }

    /** Stops the workers, frees the ciphers and zeroes the keys and the plaintext (for close). */
    private void release(Closer closer) {
        if (job != null) {
            job.shutdown(); // waits for the workers
            for (AeadCipher c : helperCiphers.drain()) {
                closer.run(c::close);
            }
        }
        if (cipher != null) {
            closer.run(cipher::close);
        }
        if (messageKey != null) {
            messageKey.destroy();
        }
        inputKey.destroy(); // still held if no read got to the header
        Arrays.fill(plain, (byte) 0);
        if (plainAhead != null) {
            Arrays.fill(plainAhead, (byte) 0); // job.shutdown() above cancelled or waited for the batch opened ahead
        }
        // sealed and ahead hold ciphertext only, as the source gave it: nothing to wipe (at
        // parallelism 2 that would be 2 MiB of writes per stream).
        if (baseNonce != null) {
            Arrays.fill(baseNonce, (byte) 0);
        }
        plainPos = plainLimit = 0;
    }
}
