package io.sealpipe.ctr;

import io.sealpipe.engine.StreamCipher;
import io.sealpipe.internal.ParallelJob;
import io.sealpipe.internal.ResourcePool;
import java.io.IOException;
import java.util.List;

/**
 * Encrypts or decrypts one large run of a CTR stream in parts, on the stream's thread and on
 * workers. The keystream of each part depends only on its stream position (counter block IV +
 * position / 16), so every runner moves its own cipher there and the result is exactly that of
 * one cipher going through the run. Reused for run after run.
 */
final class CtrJob extends ParallelJob<CtrJob.Runner> {
    /** Runs shorter than this are not worth handing to workers. */
    static final int MIN_RUN = 256 * 1024;
    /** Parts are at least this long. */
    private static final int MIN_PART = 64 * 1024;

    /** A cipher of the stream's key and a 16-byte scratch for moving it. */
    static final class Runner {
        final StreamCipher cipher;
        final byte[] scratch = new byte[16];

        Runner(StreamCipher cipher) {
            this.cipher = cipher;
        }
    }

    private final CtrStreams params;
    private final ResourcePool<Runner> helpers;
    private final int parallelism;
    private long position;
    private byte[] in;
    private int inOffset;
    private int length;
    private byte[] out;
    private int outOffset;
    private int partLength;

    CtrJob(CtrStreams params, List<Runner> helpers, int parallelism) {
        this(params, new ResourcePool<>(helpers), parallelism);
    }

    private CtrJob(CtrStreams params, ResourcePool<Runner> helpers, int parallelism) {
        super(helpers, params.executor());
        this.params = params;
        this.helpers = helpers;
        this.parallelism = parallelism;
    }

    /**
     * Transforms in[inOff, inOff + len) into out (which may be the same range) as stream
     * positions {@code pos ..}; {@code own} is used too and left at position {@code pos + len}.
     */
    void run(Runner own, long pos, byte[] src, int srcOff, int len, byte[] dst, int dstOff) throws IOException {
        position = pos;
        in = src;
        inOffset = srcOff;
        length = len;
        out = dst;
        outOffset = dstOff;
        int wanted = Math.max(1, Math.min(4 * parallelism, len / MIN_PART));
        partLength = ((len + wanted - 1) / wanted + 15) & ~15; // whole blocks, so parts rarely share one
        int parts = (len + partLength - 1) / partLength;
        start(parts, parts > 1 ? parallelism - 1 : 0);
        await(own);
        params.seek(own.cipher, pos + len, own.scratch);
    }

    /** A stream's rounds come one right after the other while it is read or written. */
    @Override
    protected boolean roundsFollowEachOther() {
        return true;
    }

    @Override
    protected void runPart(int part, Runner r) {
        int start = part * partLength;
        int n = Math.min(partLength, length - start);
        params.seek(r.cipher, position + start, r.scratch);
        r.cipher.update(in, inOffset + start, n, out, outOffset + start);
    }

    /** Waits for the workers and returns the helpers' ciphers, for closing. */
    List<Runner> shutdownAndDrain() {
        shutdown();
        return helpers.drain();
    }
}
