package io.sealpipe.hadoop;

import io.sealpipe.internal.SnappyFraming;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Writes the content of a compressed sealed file: a Snappy framing stream whose frames each hold
 * exactly 64 KiB of data (the last one less), ended by a skippable chunk (type
 * {@value #INDEX_TYPE}) that indexes the frames. Any framed-Snappy reader decodes the content and
 * skips the index; {@link SnappyIndexedContent} uses it to read any offset by decoding one frame.
 *
 * <pre>
 * content = stream identifier || frame 0 || ... || frame n-1 || index chunk
 * index chunk = 0x80 || body length (3 bytes, LE) || body
 * body = offset of frame 0 .. n-1 in the content (8 bytes LE each)
 *        || uncompressed length (8 bytes LE) || n (4 bytes LE) || "SPIX"
 * </pre>
 *
 * The body's length limits a file to 2,097,149 frames (128 GiB uncompressed). {@link #flush()}
 * does not end a frame early: frame {@code i} always starts at uncompressed offset {@code i * 65536}.
 */
final class SnappyIndexedOutputStream extends OutputStream {
    /** The index chunk's type: the first of the format's reserved skippable types. */
    static final int INDEX_TYPE = 0x80;
    /** The last bytes of the index chunk. */
    static final byte[] MAGIC = {'S', 'P', 'I', 'X'};
    /** Uncompressed length, frame count and magic, after the offsets. */
    static final int TRAILER = 8 + 4 + MAGIC.length;
    /** The most frames an index chunk body (at most 2^24 - 1 bytes) can list. */
    static final int MAX_FRAMES = (0xffffff - TRAILER) / 8;

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
        if (finished) {
            throw new IOException("the compressed content was already finished");
        }
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

    private void writeFrame() throws IOException {
        if (frames == MAX_FRAMES) {
            throw new IOException("a compressed sealed file holds at most " + MAX_FRAMES + " frames of 64 KiB (128 GiB);"
                    + " write larger files with sealpipe.fs.compress=none");
        }
        if (frames == offsets.length) {
            offsets = Arrays.copyOf(offsets, frames * 2);
        }
        offsets[frames++] = written;
        int n = SnappyFraming.encodeFrame(block, 0, filled, frame, crc);
        if (n > 0) {
            out.write(frame, 0, n);
            written += n;
        } else { // stored: the header, then the data as it is
            out.write(frame, 0, -n);
            out.write(block, 0, filled);
            written += -n + filled;
        }
        filled = 0;
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
        if (filled > 0) {
            writeFrame();
        }
        finished = true;
        int body = frames * 8 + TRAILER;
        byte[] index = new byte[SnappyFraming.CHUNK_HEADER + body];
        index[0] = (byte) INDEX_TYPE;
        index[1] = (byte) body;
        index[2] = (byte) (body >>> 8);
        index[3] = (byte) (body >>> 16);
        int at = SnappyFraming.CHUNK_HEADER;
        for (int i = 0; i < frames; i++, at += 8) {
            putLongLe(index, at, offsets[i]);
        }
        putLongLe(index, at, uncompressed);
        putIntLe(index, at + 8, frames);
        System.arraycopy(MAGIC, 0, index, at + 12, MAGIC.length);
        out.write(index);
        Arrays.fill(block, (byte) 0);
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
