package io.sealpipe.snappy;

import static io.sealpipe.internal.SnappyFraming.BLOCK_SIZE;
import static io.sealpipe.internal.SnappyFraming.CHUNK_HEADER;
import static io.sealpipe.internal.SnappyFraming.COMPRESSED;
import static io.sealpipe.internal.SnappyFraming.CRC_LENGTH;
import static io.sealpipe.internal.SnappyFraming.MAX_BODY;
import static io.sealpipe.internal.SnappyFraming.STREAM_HEADER;
import static io.sealpipe.internal.SnappyFraming.STREAM_IDENTIFIER;
import static io.sealpipe.internal.SnappyFraming.UNCOMPRESSED;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.JobRing;
import io.sealpipe.internal.ParallelJob;
import io.sealpipe.internal.SnappyFraming;
import io.sealpipe.internal.StreamState;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.zip.CRC32C;

/**
 * Decompresses a Snappy framed stream as it is read, checking the CRC-32C of every frame; made
 * by {@link SnappyStreams#decompress}. Reads streams written by any framed-Snappy writer,
 * including concatenated ones (a stream identifier may repeat) and padding or skippable chunks.
 *
 * <p>A stream that does not start with the stream identifier, ends inside a chunk, has a frame
 * that is not valid Snappy, holds more than 64 KiB or fails its CRC, or uses a reserved chunk
 * type that readers must not skip fails with an {@code IOException} naming the frame. An error
 * of the wrapped stream (a {@link StreamAuthenticationException} of a decrypting one) passes
 * through as it is. After a failure every read fails again, never a clean end of stream.
 *
 * <p>With parallelism above 1, the frames ahead are read and handed to shared workers to
 * decompress, 16 or more (4 per thread), while the reader is served the earlier ones in order.
 * {@code close()} waits for the workers. Not thread-safe.
 */
public final class FramedSnappyInputStream extends InputStream {
    private final InputStream in;
    private final boolean closeUnderlying;
    private final int helpers;
    private final JobRing<Frame> frames; // in flight: read ahead and being decompressed
    private Frame current;          // the frame being served: current.out[pos, current.length); not in flight
    private int pos;
    private boolean sawIdentifier;
    private boolean ended;          // the wrapped stream ended at a chunk boundary
    private long nextFrame;
    private long position;          // bytes of the wrapped stream consumed
    private final StreamState state = new StreamState("decompression");
    private final byte[] chunkHeader = new byte[CHUNK_HEADER];
    private final byte[] skipBuffer = new byte[512];
    private final byte[] one = new byte[1];

    /** One frame read ahead: its body as read, and its data once decompressed. */
    private static final class Frame extends ParallelJob<Void> {
        final byte[] body = new byte[MAX_BODY];
        final byte[] out = new byte[BLOCK_SIZE];
        final CRC32C crc = new CRC32C();
        int type;
        int bodyLength;
        long index;
        int length;

        Frame(Executor executor) {
            super(null, executor); // decompressing needs nothing but the frame's own buffers
        }

        @Override
        protected void runPart(int part, Void none) throws IOException {
            length = SnappyFraming.decodeFrame(type, body, 0, bodyLength, out, 0, crc, index);
        }
    }

    FramedSnappyInputStream(InputStream in, SnappyStreams params) {
        this.in = in;
        this.closeUnderlying = params.closeUnderlying();
        int parallelism = params.parallelism();
        this.helpers = parallelism > 1 ? 1 : 0;
        this.frames = new JobRing<>(SnappyFraming.framesInFlight(parallelism), () -> new Frame(params.executor()));
    }

    @Override
    public int read() throws IOException {
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        state.check();
        Checks.range("b", b, off, len);
        if (len == 0) {
            return 0;
        }
        while (current == null || pos == current.length) {
            if (!nextFrame()) {
                return -1;
            }
        }
        int n = Math.min(len, current.length - pos);
        System.arraycopy(current.out, pos, b, off, n);
        pos += n;
        return n;
    }

    @Override
    public int available() throws IOException {
        state.check();
        return current == null ? 0 : current.length - pos;
    }

    /** Makes the next frame current; false at the end of the stream. */
    private boolean nextFrame() throws IOException {
        try {
            current = null; // its buffers may now be read into again
            while (!frames.isFull() && !ended) {
                Frame f = frames.next();
                if (!readFrame(f)) {
                    break;
                }
                f.start(1, helpers);
                frames.started();
            }
            if (frames.inFlight() == 0) {
                return false;
            }
            current = frames.finishOldest();
            pos = 0;
            return true;
        } catch (Throwable t) {
            throw state.fail(t);
        }
    }

    /** Reads chunks up to the next data frame into {@code f}; false at the end of the stream. */
    private boolean readFrame(Frame f) throws IOException {
        while (true) {
            int got = readUpTo(chunkHeader, 0, CHUNK_HEADER);
            if (got == 0) {
                if (!sawIdentifier) {
                    throw new IOException("not a Snappy framed stream: it is empty (it must start with the stream identifier"
                            + " chunk)");
                }
                ended = true;
                return false;
            }
            if (got < CHUNK_HEADER) {
                throw truncated("in a chunk header");
            }
            int type = chunkHeader[0] & 0xff;
            int length = SnappyFraming.intLe(chunkHeader, 0) >>> 8;
            if (!sawIdentifier && type != STREAM_IDENTIFIER) {
                throw new IOException(String.format("not a Snappy framed stream: it starts with a chunk of type 0x%02x,"
                        + " not the stream identifier (0xff \"sNaPpY\")", type));
            }
            if (type == STREAM_IDENTIFIER) {
                checkIdentifier(length);
                continue;
            }
            if (type == COMPRESSED || type == UNCOMPRESSED) {
                if (length < CRC_LENGTH || length > MAX_BODY) {
                    throw SnappyFraming.corrupt(nextFrame, "a body of " + length + " bytes (a data frame has "
                            + CRC_LENGTH + ".." + MAX_BODY + ")");
                }
                if (readUpTo(f.body, 0, length) < length) {
                    throw truncated("in frame " + nextFrame);
                }
                f.type = type;
                f.bodyLength = length;
                f.index = nextFrame++;
                return true;
            }
            if (type <= 0x7f) {
                throw new IOException(String.format("corrupt Snappy framed stream: a reserved unskippable chunk of type"
                        + " 0x%02x after frame %d (a newer or different format?)", type, nextFrame - 1));
            }
            skip(length); // padding (0xfe) or a reserved skippable chunk (0x80..0xfd)
        }
    }

    private void checkIdentifier(int length) throws IOException {
        byte[] body = new byte[STREAM_HEADER.length - CHUNK_HEADER];
        if (length != body.length || readUpTo(body, 0, body.length) < body.length
                || !Arrays.equals(body, 0, body.length, STREAM_HEADER, CHUNK_HEADER, STREAM_HEADER.length)) {
            throw new IOException("not a Snappy framed stream: its stream identifier chunk is not 0xff \"sNaPpY\"");
        }
        sawIdentifier = true;
    }

    private void skip(int length) throws IOException {
        for (int left = length; left > 0; ) {
            int n = readUpTo(skipBuffer, 0, Math.min(left, skipBuffer.length));
            if (n == 0) {
                throw truncated("in a skippable chunk");
            }
            left -= n;
        }
    }

    /** Reads until {@code len} bytes or the end; returns how many were read. */
    private int readUpTo(byte[] b, int off, int len) throws IOException {
        int done = 0;
        while (done < len) {
            int n = in.read(b, off + done, len - done);
            if (n < 0) {
                break;
            }
            done += n;
        }
        position += done;
        return done;
    }

    private IOException truncated(String where) {
        return new IOException("truncated Snappy framed stream: it ends " + where + " (after " + position
                + " bytes)");
    }

    @Override
    public void close() throws IOException {
        if (!state.close()) {
            return;
        }
        Closer closer = new Closer();
        frames.shutdown(); // waits for the workers still decompressing
        if (closeUnderlying) {
            closer.run(in::close);
        }
        frames.forEach(f -> {
            Arrays.fill(f.out, (byte) 0);
            Arrays.fill(f.body, (byte) 0);
        });
        current = null;
        closer.rethrow();
    }
}
