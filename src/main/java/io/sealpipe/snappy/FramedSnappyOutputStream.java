package io.sealpipe.snappy;

import static io.sealpipe.internal.SnappyFraming.BLOCK_SIZE;
import static io.sealpipe.internal.SnappyFraming.FRAME_HEADER;

import io.sealpipe.Abortable;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.JobRing;
import io.sealpipe.internal.ParallelJob;
import io.sealpipe.internal.SnappyFraming;
import io.sealpipe.internal.StreamState;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.zip.CRC32C;
import org.xerial.snappy.Snappy;

/**
 * Compresses what is written to it into the Snappy framing format and passes the frames on to
 * the wrapped stream (typically an encrypting one); made by {@link SnappyStreams#compress}.
 *
 * <p>Data is cut into frames of 64 KiB. With parallelism 1 each frame is compressed when it is
 * full, and writes of 64 KiB or more are compressed straight from the caller's array. With
 * parallelism above 1, full frames are compressed by shared workers, 16 or more ahead (4 per
 * thread), while this thread passes the finished ones on in order; when all are in flight a write
 * waits for the oldest, compressing the newest nobody took meanwhile (memory stays at about 140
 * KiB per frame in flight: 2.2 MiB up to parallelism 4). The frames are the same either way.
 *
 * <p>{@link #flush()} passes everything written on as a (possibly short) frame and flushes the
 * wrapped stream. {@link #close()} writes the last frame, waits for the workers, and closes the
 * wrapped stream (unless {@code closeUnderlying(false)}), even if a step fails; it is
 * idempotent. After a failure of any kind (compressing a frame on a helper thread included), later
 * writes fail, and close passes nothing more on, <b>abandons</b> the wrapped stream if it is a
 * sealpipe stream (so an encrypted message is left truncated, never a shorter complete one; see
 * {@link Abortable}) and throws the failure again. {@link #abort()} does the same on the
 * caller's request. With {@code closeUnderlying(false)} the wrapped stream is the caller's to
 * abandon. Not thread-safe.
 */
public final class FramedSnappyOutputStream extends OutputStream implements Abortable {
    private final OutputStream out;
    private final boolean closeUnderlying;
    private final int helpers;
    private final JobRing<Frame> frames; // in flight: being compressed; next(): the frame being filled
    private final boolean alone;         // parallelism 1: one frame, compressed by this thread
    private boolean headerWritten;
    private long written;
    private final StreamState state = new StreamState("compression");
    private final byte[] one = new byte[1];

    /** Compresses one frame: {@link SnappyFraming#encodeFrame}, or a failing one in tests. */
    interface FrameEncoder {
        int encode(byte[] in, int off, int len, byte[] frame, CRC32C crc) throws IOException;
    }

    /** One frame: its data (gathered here, or the caller's array), and the frame it compresses to. */
    private static final class Frame extends ParallelJob<Void> {
        final byte[] block = new byte[BLOCK_SIZE];
        final byte[] frame = new byte[FRAME_HEADER + Snappy.maxCompressedLength(BLOCK_SIZE)];
        final CRC32C crc = new CRC32C();
        final FrameEncoder encoder;
        int filled;     // block[0, filled)
        byte[] src;     // what is compressed: block, or a caller's array during its write
        int srcOffset;
        int length;
        int encoded;    // SnappyFraming.encodeFrame's result

        Frame(Executor executor, FrameEncoder encoder) {
            super(null, executor); // compressing needs nothing but the frame's own buffers
            this.encoder = encoder;
        }

        void begin(byte[] data, int off, int len, int helpers) {
            src = data;
            srcOffset = off;
            length = len;
            start(1, helpers);
        }

        @Override
        protected void runPart(int part, Void none) throws IOException {
            encoded = encoder.encode(src, srcOffset, length, frame, crc);
        }

        void wipe() {
            Arrays.fill(block, (byte) 0);
            Arrays.fill(frame, (byte) 0);
            filled = 0;
            src = null;
        }
    }

    FramedSnappyOutputStream(OutputStream out, SnappyStreams params) {
        this(out, params, SnappyFraming::encodeFrame);
    }

    FramedSnappyOutputStream(OutputStream out, SnappyStreams params, FrameEncoder encoder) {
        this.out = out;
        this.closeUnderlying = params.closeUnderlying();
        int parallelism = params.parallelism();
        this.helpers = parallelism > 1 ? 1 : 0;
        this.frames = new JobRing<>(SnappyFraming.framesInFlight(parallelism), () -> new Frame(params.executor(), encoder));
        this.alone = parallelism == 1;
    }

    /**
     * Uncompressed bytes written so far.
     *
     * @return the count of bytes accepted by the write methods, compressed or still buffered
     */
    public long bytesWritten() {
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
            while (len > 0) {
                Frame f = frames.next();
                if (f.filled == 0 && len >= BLOCK_SIZE && alone) {
                    // A whole frame straight from the caller's array, passed on before this returns.
                    f.begin(b, off, BLOCK_SIZE, 0);
                    frames.started();
                    pass(frames.finishOldest());
                    off += BLOCK_SIZE;
                    len -= BLOCK_SIZE;
                    written += BLOCK_SIZE;
                    continue;
                }
                int n = Math.min(len, BLOCK_SIZE - f.filled);
                System.arraycopy(b, off, f.block, f.filled, n);
                f.filled += n;
                off += n;
                len -= n;
                written += n;
                if (f.filled == BLOCK_SIZE) {
                    submitFilling();
                }
            }
        } catch (Throwable t) {
            throw state.fail(t);
        }
    }

    /** Hands the frame being filled to the workers; if all frames are in flight, finishes the oldest. */
    private void submitFilling() throws IOException {
        Frame f = frames.next();
        f.begin(f.block, 0, f.filled, helpers);
        frames.started();
        if (frames.isFull()) {
            pass(frames.finishOldest());
        }
    }

    /** Writes a compressed frame out; its buffer is free for the next data after this. */
    private void pass(Frame f) throws IOException {
        writeHeaderOnce();
        if (f.encoded > 0) {
            out.write(f.frame, 0, f.encoded);
        } else { // stored: the header, then the data as it is
            out.write(f.frame, 0, FRAME_HEADER);
            out.write(f.src, f.srcOffset, f.length);
        }
        f.filled = 0;
    }

    private void writeHeaderOnce() throws IOException {
        if (!headerWritten) {
            out.write(SnappyFraming.STREAM_HEADER);
            headerWritten = true;
        }
    }

    /** Passes on everything written (the last frame may be short), then flushes the wrapped stream. */
    @Override
    public void flush() throws IOException {
        state.check();
        try {
            passEverything();
            out.flush();
        } catch (Throwable t) {
            throw state.fail(t);
        }
    }

    private void passEverything() throws IOException {
        if (frames.next().filled > 0) {
            submitFilling();
        }
        while (frames.inFlight() > 0) {
            pass(frames.finishOldest());
        }
        writeHeaderOnce();
    }

    /**
     * Passes everything on and closes the wrapped stream; after a failure it abandons the wrapped
     * stream instead, and throws the failure again (see the class comment).
     */
    @Override
    public void close() throws IOException {
        if (!state.close()) {
            return;
        }
        Closer closer = new Closer();
        if (state.failedOrAborted()) {
            closer.fail(state.unfinished("the compressed stream"));
        } else {
            closer.run(() -> state.run(() -> {
                passEverything(); // a frame that failed on a helper thread fails here
                if (!closeUnderlying) {
                    out.flush();
                }
            }));
        }
        frames.shutdown(); // waits for the workers still compressing
        if (closeUnderlying) {
            if (state.failedOrAborted() && out instanceof Abortable a) {
                a.abort(); // the message under this one must not end either
            } else {
                closer.run(out::close);
            }
        }
        frames.forEach(Frame::wipe);
        closer.rethrow();
    }

    /**
     * Abandons the stream: passes nothing more on, and abandons the wrapped stream too if it is
     * a sealpipe stream (unless {@code closeUnderlying(false)}); see {@link Abortable}.
     */
    @Override
    public void abort() {
        state.abandon(this);
    }
}
