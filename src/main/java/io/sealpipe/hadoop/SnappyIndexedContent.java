package io.sealpipe.hadoop;

import io.sealpipe.gcm.GcmSeekableChannel;
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
    private long lastDecoded = -1; // the last frame read from the message
    private boolean closed;
    private byte[] scratch; // for reads into direct buffers

    private SnappyIndexedContent(GcmSeekableChannel message, String name, long length, int frames, long indexStart) {
        this.message = message;
        this.name = name;
        this.length = length;
        this.frames = frames;
        this.indexStart = indexStart;
    }

    /**
     * Reads the stream identifier and the trailer chunk (which authenticates the message's final
     * chunk); the frame offsets are read and checked at the first read.
     *
     * @param name what to call the file in errors
     * @throws IOException if the content is not a compressed sealed file's
     */
    static SnappyIndexedContent open(GcmSeekableChannel message, String name) throws IOException {
        long size = message.size();
        int head = SnappyFraming.STREAM_HEADER.length;
        int tail = SnappyFraming.CHUNK_HEADER + SnappyIndexedOutputStream.TRAILER;
        if (size < head + tail) {
            throw corrupt(name, "its content is " + size + " bytes, shorter than the smallest compressed file's "
                    + (head + tail));
        }
        byte[] identifier = new byte[head];
        message.readFully(0, identifier, 0, head);
        if (!Arrays.equals(identifier, SnappyFraming.STREAM_HEADER)) {
            throw corrupt(name, "its content does not start with the Snappy stream identifier");
        }
        byte[] trailer = new byte[tail];
        message.readFully(size - tail, trailer, 0, tail);
        if ((trailer[0] & 0xff) != SnappyIndexedOutputStream.INDEX_TYPE
                || SnappyFraming.intLe(trailer, 0) >>> 8 != SnappyIndexedOutputStream.TRAILER
                || !Arrays.equals(trailer, tail - 4, tail, SnappyIndexedOutputStream.MAGIC, 0, 4)) {
            throw corrupt(name, "its content does not end with sealpipe's frame index");
        }
        long length = SnappyIndexedOutputStream.longLe(trailer, SnappyFraming.CHUNK_HEADER);
        int frames = SnappyFraming.intLe(trailer, SnappyFraming.CHUNK_HEADER + 8);
        if (frames < 0 || frames > SnappyIndexedOutputStream.MAX_FRAMES || length < 0
                || frames != (length + BLOCK - 1) / BLOCK) {
            throw corrupt(name, "its frame index is inconsistent (" + frames + " frames, " + length + " bytes)");
        }
        long indexStart = size - tail - indexLength(frames);
        if (indexStart < head + (long) frames * SnappyFraming.FRAME_HEADER) {
            throw corrupt(name, "its frame index claims " + frames + " frames, more than its " + size + " bytes hold");
        }
        return new SnappyIndexedContent(message, name, length, frames, indexStart);
    }

    /** The bytes of the offset chunks for {@code frames} frames. */
    private static long indexLength(int frames) {
        long chunks = (frames + SnappyIndexedOutputStream.OFFSETS_PER_CHUNK - 1) / SnappyIndexedOutputStream.OFFSETS_PER_CHUNK;
        return chunks * SnappyFraming.CHUNK_HEADER + 8L * frames;
    }

    /**
     * Reads the offset chunks and checks that the frames lie back to back from the stream
     * identifier to the index, each of a size a frame can have.
     */
    private long[] loadOffsets() throws IOException {
        byte[] index = new byte[(int) indexLength(frames)];
        message.readFully(indexStart, index, 0, index.length);
        long[] read = new long[frames];
        int at = 0;
        for (int first = 0; first < frames; first += SnappyIndexedOutputStream.OFFSETS_PER_CHUNK) {
            int count = Math.min(SnappyIndexedOutputStream.OFFSETS_PER_CHUNK, frames - first);
            if ((index[at] & 0xff) != SnappyIndexedOutputStream.INDEX_TYPE || SnappyFraming.intLe(index, at) >>> 8 != 8 * count) {
                throw corrupt(name, "its offset chunk for frames " + first + ".. is not where the trailer puts it");
            }
            at += SnappyFraming.CHUNK_HEADER;
            for (int i = first; i < first + count; i++, at += 8) {
                read[i] = SnappyIndexedOutputStream.longLe(index, at);
            }
        }
        long expected = SnappyFraming.STREAM_HEADER.length;
        for (int i = 0; i < frames; i++) {
            long end = i + 1 < frames ? read[i + 1] : indexStart;
            if (read[i] != expected || end - read[i] < SnappyFraming.FRAME_HEADER
                    || end - read[i] > SnappyFraming.CHUNK_HEADER + SnappyFraming.MAX_BODY) {
                throw corrupt(name, "frame " + i + " is indexed at " + read[i] + ", not right after the frame before it,"
                        + " or with a size no frame has");
            }
            expected = end;
        }
        if (frames == 0 && indexStart != SnappyFraming.STREAM_HEADER.length) {
            throw corrupt(name, "it holds bytes between its stream identifier and its index, but no frames");
        }
        return read;
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
        checkOpen();
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
            if (scratch == null) {
                scratch = new byte[BLOCK];
            }
            n = read(position, scratch, 0, Math.min(dst.remaining(), BLOCK));
            if (n > 0) {
                dst.put(scratch, 0, n);
            }
        }
        if (n > 0) {
            position += n;
        }
        return n;
    }

    @Override
    public synchronized int read(long at, byte[] b, int off, int len) throws IOException {
        checkOpen();
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
        if (len == 0) {
            checkOpen();
            return;
        }
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
            offsets = loadOffsets();
        }
        int i = (int) frame;
        long start = offsets[i];
        int size = (int) ((i + 1 < frames ? offsets[i + 1] : indexStart) - start);
        if (encoded.length < size) {
            encoded = new byte[size];
        }
        if (frame == lastDecoded + 1) {
            // The next frame: the message's own sequential reads (whole chunks, read ahead).
            message.position(start);
            ByteBuffer into = ByteBuffer.wrap(encoded, 0, size);
            while (into.hasRemaining()) {
                if (message.read(into) < 0) {
                    throw corrupt(name, "frame " + i + " ends past the content");
                }
            }
        } else {
            message.readFully(start, encoded, 0, size);
        }
        lastDecoded = frame;
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
    public synchronized boolean isOpen() {
        return !closed;
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new IOException(name + ": the stream is closed");
        }
    }

    /** Closes the message and zeroes the decoded frames. */
    @Override
    public synchronized void close() throws IOException {
        closed = true;
        decodedFrame[0] = -1;
        decodedFrame[1] = -1;
        Arrays.fill(decoded[0], (byte) 0);
        Arrays.fill(decoded[1], (byte) 0);
        Arrays.fill(encoded, (byte) 0);
        if (scratch != null) {
            Arrays.fill(scratch, (byte) 0);
        }
        message.close();
    }
}
