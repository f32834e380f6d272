package io.sealpipe.gcm;

import static io.sealpipe.gcm.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.MAX_CHUNKS;
import static io.sealpipe.gcm.Cobblestone.NONCE_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SEALED_CHUNK_SIZE;

import io.sealpipe.engine.AeadCipher;
import io.sealpipe.internal.CiphertextSink;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.HeapRegions;
import io.sealpipe.internal.ResourcePool;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.Executor;

/**
 * The chunk sealing of a {@link GcmOutputStream} with parallelism above 1, which the stream
 * switches to once a message is long enough to gain from it. Plaintext is gathered in two
 * batches of {@link #BATCH_CHUNKS} chunks: while helpers seal a full batch, the writer fills the
 * other one, and the sealed batches are passed on in order. Writes of {@link #DIRECT_CHUNKS}
 * chunks or more are sealed straight from the caller's array, split among the stream's thread
 * and the workers, before {@code write} returns. The bytes written are exactly those of the
 * sequential stream.
 */
final class GcmParallelWriter {
    /**
     * Chunks per batch: the most, up to 63 (1008 KiB of plaintext), whose buffers are not
     * humongous objects in this JVM's G1 heap: 63 with regions of 2 MiB or more (heaps above 2 GiB)
     * or another collector, 31 (496 KiB) with 1 MiB regions. A humongous buffer takes whole
     * regions of its own (a 1 MiB batch took two of 1 MiB), and a stream at parallelism 2 holds
     * four. Fewer chunks per batch cost more rounds with the workers: measured in
     * docs/PERFORMANCE.md (issue 29).
     */
    static final int BATCH_CHUNKS = HeapRegions.SEALED_CHUNK_BATCH;

    /**
     * The batch for arrays of at most {@code largestArray} bytes: a reader's sealed buffer is
     * a batch's sealed chunks and one byte more.
     */
    static int batchChunks(long largestArray) {
        return HeapRegions.batchChunks(largestArray, SEALED_CHUNK_SIZE);
    }

    /** Writes of at least this many whole chunks are sealed from the caller's array. */
    static final int DIRECT_CHUNKS = 16;

    private final CiphertextSink sink;
    private final AeadCipher own;
    private final ResourcePool<AeadCipher> helperCiphers;
    private final byte[] baseNonce;
    private final byte[] nonce = new byte[NONCE_LENGTH];
    private final Batch[] batches;
    private int current;
    private long nextChunk;

    /** One batch: plaintext being gathered, and its sealed chunks once a round sealed them. */
    private final class Batch {
        final byte[] plain = new byte[BATCH_CHUNKS * CHUNK_SIZE];
        final byte[] sealed = new byte[BATCH_CHUNKS * SEALED_CHUNK_SIZE];
        final ChunkJob job;
        int filled;       // plain[0, filled)
        int sealedLength; // sealed[0, sealedLength) once job is awaited

        Batch(Executor executor, int parallelism) {
            job = new ChunkJob(helperCiphers, executor, baseNonce, parallelism, null);
        }
    }

    /**
     * Takes over from the sequential stream at chunk {@code nextChunk}, with {@code partial}
     * bytes of a not yet full chunk in {@code plain}; the header and every sealed chunk were
     * passed on already.
     */
    GcmParallelWriter(CiphertextSink sink, AeadCipher own, ResourcePool<AeadCipher> helperCiphers, Executor executor,
            byte[] baseNonce, int parallelism, long nextChunk, byte[] plain, int partial) {
        this.sink = sink;
        this.own = own;
        this.helperCiphers = helperCiphers;
        this.baseNonce = baseNonce;
        this.nextChunk = nextChunk;
        this.batches = new Batch[] {new Batch(executor, parallelism), new Batch(executor, parallelism)};
        System.arraycopy(plain, 0, batches[0].plain, 0, partial);
        batches[0].filled = partial;
    }

    void write(byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            Batch c = batches[current];
            if (c.filled == 0 && len >= DIRECT_CHUNKS * CHUNK_SIZE) {
                // Whole chunks straight from the caller's array, sealed before this call returns,
                // in rounds of equal size: a 1 MiB write with batches of 63 is two rounds of 32, not
                // 63 and one chunk left to copy, after which every later write would be copied too.
                int whole = len / CHUNK_SIZE;
                int rounds = (whole + BATCH_CHUNKS - 1) / BATCH_CHUNKS;
                int count = (whole + rounds - 1) / rounds;
                completeOther();
                c.job.startSeal(claimChunks(count), b, off, count, c.sealed, 0);
                c.sealedLength = count * SEALED_CHUNK_SIZE;
                c.job.await(own);
                pass(c);
                off += count * CHUNK_SIZE;
                len -= count * CHUNK_SIZE;
                continue;
            }
            int n = Math.min(len, c.plain.length - c.filled);
            System.arraycopy(b, off, c.plain, c.filled, n);
            c.filled += n;
            off += n;
            len -= n;
            if (c.filled == c.plain.length) {
                sealFull(c);
            }
        }
    }

    /** Copies a buffer's remaining bytes in (a direct buffer cannot be sealed from where it is). */
    void write(ByteBuffer src) throws IOException {
        while (src.hasRemaining()) {
            Batch c = batches[current];
            int n = Math.min(src.remaining(), c.plain.length - c.filled);
            src.get(c.plain, c.filled, n);
            c.filled += n;
            if (c.filled == c.plain.length) {
                sealFull(c);
            }
        }
    }

    /** A full batch holds no final chunk (that is always short): workers seal it while the other fills. */
    private void sealFull(Batch c) throws IOException {
        c.job.startSeal(claimChunks(BATCH_CHUNKS), c.plain, 0, BATCH_CHUNKS, c.sealed, 0);
        c.sealedLength = BATCH_CHUNKS * SEALED_CHUNK_SIZE;
        current = 1 - current;
        Batch next = batches[current];
        if (next.job.inProgress()) {
            next.job.await(own);
            pass(next);
        }
        next.filled = 0;
    }

    /** Waits for the other batch if workers are sealing it, and passes it on. */
    private void completeOther() throws IOException {
        Batch other = batches[1 - current];
        if (other.job.inProgress()) {
            other.job.await(own);
            pass(other);
            other.filled = 0;
        }
    }

    private long claimChunks(int count) throws IOException {
        if (nextChunk > MAX_CHUNKS - count - 1) { // keep an index for the final chunk
            throw new IOException("message too long: the format allows at most 2^38 chunks (4 PiB)");
        }
        long first = nextChunk;
        nextChunk += count;
        return first;
    }

    private void pass(Batch c) throws IOException {
        sink.write(c.sealed, 0, c.sealedLength);
        c.sealedLength = 0;
    }

    /**
     * Seals and passes on every full chunk written so far (the partial one stays), as
     * {@link GcmOutputStream#flush()} promises.
     */
    void sealWholeChunks() throws IOException {
        completeOther();
        Batch c = batches[current];
        int full = c.filled / CHUNK_SIZE;
        if (full > 0) {
            c.job.startSeal(claimChunks(full), c.plain, 0, full, c.sealed, 0);
            c.sealedLength = full * SEALED_CHUNK_SIZE;
            c.job.await(own);
            pass(c);
            int rest = c.filled - full * CHUNK_SIZE;
            System.arraycopy(c.plain, full * CHUNK_SIZE, c.plain, 0, rest);
            c.filled = rest;
        }
    }

    /** Seals the full chunks and then the final, short chunk, and passes everything on. */
    void finish() throws IOException {
        sealWholeChunks();
        Batch c = batches[current];
        Cobblestone.chunkNonce(baseNonce, nextChunk, nonce);
        int n = own.seal(nonce, null, c.plain, 0, c.filled, c.sealed, 0);
        nextChunk++;
        sink.write(c.sealed, 0, n);
    }

    /** Stops the workers' rounds, waits for them, frees the helpers' ciphers and zeroes the buffers. */
    void close(Closer closer) {
        for (Batch b : batches) {
            b.job.shutdown();
        }
        for (AeadCipher c : helperCiphers.drain()) {
            closer.run(c::close);
        }
        for (Batch b : batches) {
            Arrays.fill(b.plain, (byte) 0);
            Arrays.fill(b.sealed, (byte) 0);
            b.filled = b.sealedLength = 0;
        }
        Arrays.fill(nonce, (byte) 0);
    }
}
