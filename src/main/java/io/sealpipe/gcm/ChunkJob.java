package io.sealpipe.gcm;

import static io.sealpipe.gcm.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.SEALED_CHUNK_SIZE;

import io.sealpipe.engine.AeadCipher;
import io.sealpipe.internal.ParallelJob;
import io.sealpipe.internal.ResourcePool;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.Executor;

/**
 * Seals or opens a run of full chunks of one message in parts, on the stream's thread and on
 * workers, each part with its own cipher context (all keyed with the message key). Chunks are
 * independent (their nonces depend only on their index), so the output is exactly what one
 * context would produce chunk after chunk. Reused for round after round.
 */
final class ChunkJob extends ParallelJob<AeadCipher> {
    /** Fewer chunks than this per part cost more in handing over than they save. */
    private static final int MIN_CHUNKS_PER_PART = 2;

    private final byte[] baseNonce;
    private final int parallelism;
    private final int[] opened;
    private final ByteBuffer[] inViews;  // per part, over the message in memory
    private final ByteBuffer[] outViews; // per part, over the output array
    private final byte[][] outViewArrays;
    private boolean sealing;
    private long first;
    private byte[] inArray;
    private ByteBuffer inMemory;
    private int inOffset;
    private int count;
    private byte[] out;
    private int outOffset;
    private int partChunks;
    private int partCount;

    ChunkJob(ResourcePool<AeadCipher> helperCiphers, Executor executor, byte[] baseNonce, int parallelism,
            ByteBuffer memory) {
        super(helperCiphers, executor);
        this.baseNonce = baseNonce;
        this.parallelism = parallelism;
        int maxParts = maxParts(parallelism);
        this.opened = new int[maxParts];
        this.inViews = new ByteBuffer[maxParts];
        this.outViews = new ByteBuffer[maxParts];
        this.outViewArrays = new byte[maxParts][];
        if (memory != null) {
            for (int i = 0; i < maxParts; i++) {
                inViews[i] = memory.duplicate();
            }
        }
    }

    /** A stream's rounds come one right after the other while it is read or written. */
    @Override
    protected boolean roundsFollowEachOther() {
        return true;
    }

    private static int maxParts(int parallelism) {
        return 8 * parallelism; // small parts: whoever finishes first waits less for the last
    }

    /** Starts sealing {@code count} chunks of {@code in} into {@code out} (whole sealed chunks). */
    void startSeal(long firstChunk, byte[] in, int inOff, int chunks, byte[] dst, int dstOff) {
        sealing = true;
        inArray = in;
        inMemory = null;
        begin(firstChunk, inOff, chunks, dst, dstOff);
    }

    /** Starts opening {@code count} sealed chunks of {@code in} (a byte[] or the message in memory) into {@code dst}. */
    void startOpen(long firstChunk, byte[] in, ByteBuffer memory, int inOff, int chunks, byte[] dst, int dstOff) {
        sealing = false;
        inArray = in;
        inMemory = memory;
        begin(firstChunk, inOff, chunks, dst, dstOff);
    }

    private void begin(long firstChunk, int inOff, int chunks, byte[] dst, int dstOff) {
        first = firstChunk;
        inOffset = inOff;
        count = chunks;
        out = dst;
        outOffset = dstOff;
        partCount = Math.max(1, Math.min(maxParts(parallelism), chunks / MIN_CHUNKS_PER_PART));
        partChunks = (chunks + partCount - 1) / partCount;
        partCount = (chunks + partChunks - 1) / partChunks;
        start(partCount, partCount > 1 ? parallelism - 1 : 0);
    }

    /**
     * Waits for an open started with {@link #startOpen} and returns how many chunks, from the
     * first, opened and authenticated; the output after them (the failed chunk and any chunk
     * after it that a worker opened) is zeroed, so nothing past a failure is left behind.
     */
    int awaitOpen(AeadCipher own) throws IOException {
        await(own);
        int good = 0;
        for (int i = 0; i < partCount; i++) {
            int size = Math.min(partChunks, count - i * partChunks);
            good += opened[i];
            if (opened[i] < size) {
                Arrays.fill(out, outOffset + good * CHUNK_SIZE, outOffset + count * CHUNK_SIZE, (byte) 0);
                break;
            }
        }
        return good;
    }

    @Override
    protected void runPart(int part, AeadCipher cipher) {
        int start = part * partChunks;
        int n = Math.min(partChunks, count - start);
        long firstOfPart = first + start;
        if (sealing) {
            cipher.sealChunks(baseNonce, firstOfPart, inArray, inOffset + start * CHUNK_SIZE, n, out,
                    outOffset + start * SEALED_CHUNK_SIZE);
        } else if (inMemory == null) {
            opened[part] = cipher.openChunks(baseNonce, firstOfPart, inArray, inOffset + start * SEALED_CHUNK_SIZE, n,
                    out, outOffset + start * CHUNK_SIZE);
        } else {
            ByteBuffer in = inViews[part];
            in.limit(inOffset + (start + n) * SEALED_CHUNK_SIZE).position(inOffset + start * SEALED_CHUNK_SIZE);
            opened[part] = cipher.openChunks(baseNonce, firstOfPart, in, outView(part, start, n));
        }
    }

    /** A reusable view of the output for one part (allocates only when the output array changes). */
    private ByteBuffer outView(int part, int start, int n) {
        if (outViewArrays[part] != out) {
            outViews[part] = ByteBuffer.wrap(out);
            outViewArrays[part] = out;
        }
        ByteBuffer v = outViews[part];
        v.limit(outOffset + (start + n) * CHUNK_SIZE).position(outOffset + start * CHUNK_SIZE);
        return v;
    }
}
