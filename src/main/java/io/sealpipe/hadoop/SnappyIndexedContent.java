package io.sealpipe.hadoop;

import io.sealpipe.GcmSeekableChannel;
import io.sealpipe.internal.SnappyFraming;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The decompressed content of a compressed sealed file (the layout of
 * {@link SnappyIndexedOutputStream}), read at any offset: byte {@code p} is in frame
 * {@code p / 65536}, whose place the index gives, so a read decrypts the chunks of that frame
 * and decodes it alone. The last two frames decoded are kept for the reads that follow. The
 * message authenticates every byte before it is decoded; the frame's CRC-32C is checked too.
 * Thread-safe: reads hold this object's lock.
 */
final class SnappyIndexedContent implements SealedContent {
    private static final int BLOCK = SnappyFraming.BLOCK_SIZE;

    private final GcmSeekableChannel message;
    private final String name;
    private final long length;
    private final int frames;
    private final long indexStart; // where the frames end
    private long[] offsets; // loaded at the first read
    private final CRC32C crc = new CRC32C();
    private byte[] encoded = new byte[0];
    private final byte[][] decoded = {new byte[0], new byte[0]};
    private final long[] decodedFrame = {-1, -1};
    private final int[] decodedLength = new int[2];
    private int older; // which of the two to replace next
    private long position;

    private SnappyIndexedContent(GcmSeekableChannel message, String name, long length, int frames, long indexStart) {
        this.message = message;
        this.name = name;
        this.length = length;
        this.frames = frames;
        this.indexStart = indexStart;
    }

    /**
     * Reads the stream identifier and the index's trailer (which authenticates the message's final
     * chunk); the frame offsets are read at the first read.
     *
     * @param name what to call the file in errors
     * @throws IOException if the content is not a compressed sealed file's
     */
    static SnappyIndexedContent open(GcmSeekableChannel message, String name) throws IOException {
        long size = message.size();
        long minimum = SnappyFraming.STREAM_HEADER.length + SnappyFraming.CHUNK_HEADER + SnappyIndexedOutputStream.TRAILER;
        if (size < minimum) {
            throw corrupt(name, "its content is " + size + " bytes, shorter than the smallest compressed file's " + minimum);
        }
        byte[] head = new byte[SnappyFraming.STREAM_HEADER.length];
        message.readFully(0, head, 0, head.length);
        if (!Arrays.equals(head, SnappyFraming.STREAM_HEADER)) {
            throw corrupt(name, "its content does not start with the Snappy stream identifier");
        }
        byte[] trailer = new byte[SnappyIndexedOutputStream.TRAILER];
        message.readFully(size - trailer.length, trailer, 0, trailer.length);
        if (!Arrays.equals(trailer, 12, 16, SnappyIndexedOutputStream.MAGIC, 0, 4)) {
            throw corrupt(name, "its content does not end with sealpipe's frame index");
        }
        long length = SnappyIndexedOutputStream.longLe(trailer, 0);
        int frames = SnappyFraming.intLe(trailer, 8);
        long indexStart = size - SnappyFraming.CHUNK_HEADER - 8L * frames - trailer.length;
        if (frames < 0 || frames > SnappyIndexedOutputStream.MAX_FRAMES || length < 0
                || frames != (length + BLOCK - 1) / BLOCK || indexStart < head.length) {
            throw corrupt(name, "its frame index is inconsistent (" + frames + " frames, " + length + " bytes)");
        }
        byte[] chunk = new byte[SnappyFraming.CHUNK_HEADER];
        message.readFully(indexStart, chunk, 0, chunk.length);
        int body = SnappyFraming.intLe(chunk, 0) >>> 8;
        if ((chunk[0] & 0xff) != SnappyIndexedOutputStream.INDEX_TYPE || body != 8 * frames + trailer.length) {
            throw corrupt(name, "its frame index chunk is not where its trailer puts it");
        }
        return new SnappyIndexedContent(message, name, length, frames, indexStart);
    }

    private static IOException corrupt(String name, String what) {
        return new IOException(name + " is not a compressed sealed file as sealpipe writes them: " + what);
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public synchronized long position() {
        return position;
    }

    @Override
    public synchronized void position(long newPosition) {
        position = newPosition;
    }

    @Override
    public synchronized int read(ByteBuffer dst) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        int n;
        if (dst.hasArray()) {
            n = read(position, dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
            if (n > 0) {
                dst.position(dst.position() + n);
            }
        } else {
            byte[] b = new byte[Math.min(dst.remaining(), BLOCK)];
            n = read(position, b, 0, b.length);
            if (n > 0) {
                dst.put(b, 0, n);
            }
        }
        if (n > 0) {
            position += n;
        }
        return n;
    }

    @Override
    public synchronized int read(long at, byte[] b, int off, int len) throws IOException {
        if (at >= length) {
            return len == 0 ? 0 : -1;
        }
        int done = 0;
        while (done < len && at < length) {
            long frame = at / BLOCK;
            int slot = decode(frame);
            int from = (int) (at - frame * BLOCK);
            int n = Math.min(len - done, decodedLength[slot] - from);
            System.arraycopy(decoded[slot], from, b, off + done, n);
            done += n;
            at += n;
        }
        return done;
    }

    @Override
    public void readFully(long at, byte[] b, int off, int len) throws IOException {
        if (at < 0 || at > length || len > length - at) {
            throw new EOFException("cannot read " + len + " bytes at " + at + " of " + name + ", which has " + length);
        }
        read(at, b, off, len);
    }

    /** The slot holding frame {@code frame} decoded, decoding it into the older slot if needed. */
    private int decode(long frame) throws IOException {
        for (int slot = 0; slot < 2; slot++) {
            if (decodedFrame[slot] == frame) {
                older = 1 - slot;
                return slot;
            }
        }
        if (offsets == null) {
            byte[] index = new byte[8 * frames];
            message.readFully(indexStart + SnappyFraming.CHUNK_HEADER, index, 0, index.length);
            long[] read = new long[frames];
            for (int i = 0; i < frames; i++) {
                read[i] = SnappyIndexedOutputStream.longLe(index, 8 * i);
            }
            offsets = read;
        }
        int i = (int) frame;
        long start = offsets[i];
        long end = i + 1 < frames ? offsets[i + 1] : indexStart;
        long size = end - start;
        if (start < SnappyFraming.STREAM_HEADER.length || size < SnappyFraming.FRAME_HEADER
                || size > SnappyFraming.CHUNK_HEADER + SnappyFraming.MAX_BODY) {
            throw corrupt(name, "frame " + i + " is indexed at " + start + " with " + size + " bytes");
        }
        if (encoded.length < size) {
            encoded = new byte[(int) size];
        }
        message.readFully(start, encoded, 0, (int) size);
        int type = encoded[0] & 0xff;
        int body = SnappyFraming.intLe(encoded, 0) >>> 8;
        if ((type != SnappyFraming.COMPRESSED && type != SnappyFraming.UNCOMPRESSED) || body != size - SnappyFraming.CHUNK_HEADER) {
            throw corrupt(name, "frame " + i + " is not a data frame of the size the index gives");
        }
        int slot = older;
        if (decoded[slot].length == 0) {
            decoded[slot] = new byte[BLOCK];
        }
        decodedFrame[slot] = -1;
        int n = SnappyFraming.decodeFrame(type, encoded, SnappyFraming.CHUNK_HEADER, body, decoded[slot], 0, crc, i);
        long expected = Math.min(BLOCK, length - frame * BLOCK);
        if (n != expected) {
            throw corrupt(name, "frame " + i + " holds " + n + " bytes, not " + expected);
        }
        decodedFrame[slot] = frame;
        decodedLength[slot] = n;
        older = 1 - slot;
        return slot;
    }

    @Override
    public long chunksOpened() {
        return message.chunksOpened();
    }

    @Override
    public boolean isOpen() {
        return message.isOpen();
    }

    /** Closes the message and zeroes the decoded frames. */
    @Override
    public synchronized void close() throws IOException {
        Arrays.fill(decoded[0], (byte) 0);
        Arrays.fill(decoded[1], (byte) 0);
        Arrays.fill(encoded, (byte) 0);
        message.close();
    }
}
