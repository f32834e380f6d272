package io.sealpipe.hadoop;

import io.sealpipe.internal.SnappyFraming;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Writes the content of a compressed sealed file: a Snappy framing stream whose frames each hold
 * exactly 64 KiB of data (the last one less), ended by skippable chunks (type
 * {@value #INDEX_TYPE}) that index the frames. Any framed-Snappy reader decodes the content and
 * skips the index; {@link SnappyIndexedContent} uses it to read any offset by decoding one frame.
 *
 * <pre>
 * content       = stream identifier || frame 0 || ... || frame n-1 || offset chunks || trailer chunk
 * offset chunk  = 0x80 || body length (3 bytes, LE) || the offsets in the content of up to 8192
 *                 frames (8 bytes LE each), in order; ceil(n / 8192) of them
 * trailer chunk = 0x80 || 16 (3 bytes, LE) || uncompressed length (8 bytes LE) || n (4 bytes LE) || "SPIX"
 * </pre>
 *
 * Chunks of at most 64 KiB keep every framed-Snappy reader happy (Go's rejects longer ones). A
 * file holds at most {@value #MAX_FRAMES} frames (128 GiB), which bounds a reader's index at 16 MiB.
 * {@link #flush()} does not end a frame early: frame {@code i} always starts at uncompressed
 * offset {@code i * 65536}. After a failed write the stream only fails: it never finishes a
 * content with a frame missing.
 */
final class SnappyIndexedOutputStream extends OutputStream {
    /** The index chunks' type: the first of the format's reserved skippable types. */
    static final int INDEX_TYPE = 0x80;
    /** The last bytes of the trailer chunk. */
    static final byte[] MAGIC = {'S', 'P', 'I', 'X'};
    /** The trailer chunk's body: uncompressed length, frame count and magic. */
    static final int TRAILER = 8 + 4 + MAGIC.length;
    /** Frame offsets per offset chunk (a 64 KiB body). */
    static final int OFFSETS_PER_CHUNK = 8192;
    /** The most frames a file may have: 128 GiB of content. */
    static final int MAX_FRAMES = 1 << 21;

    private final OutputStream out;
    private final byte[] block = new byte[SnappyFraming.BLOCK_SIZE];
    private final byte[] frame = new byte[SnappyFraming.FRAME_HEADER + SnappyFraming.MAX_BODY];
    private final CRC32C crc = new CRC32C();
    private final byte[] one = new byte[1];
    private long[] offsets = new long[64];
    private int frames;
    private int filled;
    private long written; // content bytes passed to out
    private long uncompressed;
    private boolean finished;
    private boolean failed;

    /** Writes the stream identifier to {@code out}, which receives the content. */
    SnappyIndexedOutputStream(OutputStream out) throws IOException {
        this.out = out;
        out.write(SnappyFraming.STREAM_HEADER);
        written = SnappyFraming.STREAM_HEADER.length;
    }

    @Override
    public void write(int b) throws IOException {
        one[0] = (byte) b;
        write(one, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        java.util.Objects.checkFromIndexSize(off, len, b.length);
        checkWritable();
        while (len > 0) {
            int n = Math.min(len, block.length - filled);
            System.arraycopy(b, off, block, filled, n);
            filled += n;
            off += n;
            len -= n;
            uncompressed += n;
            if (filled == block.length) {
                writeFrame();
            }
        }
    }

    private void checkWritable() throws IOException {
        if (failed) {
            throw new IOException("an earlier write of the compressed content failed: the file cannot be finished");
        }
        if (finished) {
            throw new IOException("the compressed content was already finished");
        }
    }

    private void writeFrame() throws IOException {
        if (frames == MAX_FRAMES) {
            failed = true;
            throw new IOException("a compressed sealed file holds at most " + MAX_FRAMES + " frames of 64 KiB (128 GiB);"
                    + " write larger files with sealpipe.fs.compress=none");
        }
        boolean done = false;
        try {
            if (frames == offsets.length) {
                offsets = Arrays.copyOf(offsets, frames * 2);
            }
            int n = SnappyFraming.encodeFrame(block, 0, filled, frame, crc);
            if (n > 0) {
                out.write(frame, 0, n);
            } else { // stored: the header, then the data as it is
                n = -n;
                out.write(frame, 0, n);
                out.write(block, 0, filled);
                n += filled;
            }
            offsets[frames++] = written;
            written += n;
            filled = 0;
            done = true;
        } finally {
            failed |= !done;
        }
    }

    /** Passes on what the sealed stream can: no frame is ended early. */
    @Override
    public void flush() throws IOException {
        out.flush();
    }

    /** Writes the last frame and the index; {@code out} is then complete but not closed. */
    void finish() throws IOException {
        if (finished) {
            return;
        }
        checkWritable();
        if (filled > 0) {
            writeFrame();
        }
        boolean done = false;
        try {
            int chunks = (frames + OFFSETS_PER_CHUNK - 1) / OFFSETS_PER_CHUNK;
            byte[] index = new byte[chunks * SnappyFraming.CHUNK_HEADER + 8 * frames + SnappyFraming.CHUNK_HEADER + TRAILER];
            int at = 0;
            for (int first = 0; first < frames; first += OFFSETS_PER_CHUNK) {
                int count = Math.min(OFFSETS_PER_CHUNK, frames - first);
                at = putChunkHeader(index, at, 8 * count);
                for (int i = first; i < first + count; i++, at += 8) {
                    putLongLe(index, at, offsets[i]);
                }
            }
            at = putChunkHeader(index, at, TRAILER);
            putLongLe(index, at, uncompressed);
            putIntLe(index, at + 8, frames);
            System.arraycopy(MAGIC, 0, index, at + 12, MAGIC.length);
            out.write(index);
            done = true;
        } finally {
            failed |= !done;
            finished = done;
        }
        Arrays.fill(block, (byte) 0);
        Arrays.fill(frame, (byte) 0);
    }

    private static int putChunkHeader(byte[] b, int at, int bodyLength) {
        b[at] = (byte) INDEX_TYPE;
        b[at + 1] = (byte) bodyLength;
        b[at + 2] = (byte) (bodyLength >>> 8);
        b[at + 3] = (byte) (bodyLength >>> 16);
        return at + SnappyFraming.CHUNK_HEADER;
    }

    /** Zeroes the buffered data (the stream is being abandoned). */
    void discard() {
        failed = true;
        Arrays.fill(block, (byte) 0);
        Arrays.fill(frame, (byte) 0);
    }

    /** Finishes the content and closes {@code out}. */
    @Override
    public void close() throws IOException {
        try {
            finish();
        } finally {
            out.close();
        }
    }

    static void putLongLe(byte[] b, int at, long v) {
        for (int i = 0; i < 8; i++) {
            b[at + i] = (byte) (v >>> (8 * i));
        }
    }

    static void putIntLe(byte[] b, int at, int v) {
        for (int i = 0; i < 4; i++) {
            b[at + i] = (byte) (v >>> (8 * i));
        }
    }

    static long longLe(byte[] b, int at) {
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (b[at + i] & 0xff);
        }
        return v;
    }
}
