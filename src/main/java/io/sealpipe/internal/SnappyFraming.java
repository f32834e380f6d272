package io.sealpipe.internal;

import java.io.IOException;
import java.util.zip.CRC32C;
import org.xerial.snappy.Snappy;

/**
 * The Snappy framing format (x-snappy-framed, github.com/google/snappy framing_format.txt) as
 * the compressing streams write and read it:
 *
 * <pre>
 * stream    = stream identifier, then frames
 * chunk     = type (1 byte) || length of the body (3 bytes, little-endian) || body
 * stream identifier: type 0xff, body "sNaPpY"
 * frame, compressed:   type 0x00, body = masked CRC-32C of the uncompressed data (4 bytes, LE) || Snappy block
 * frame, uncompressed: type 0x01, body = masked CRC-32C (4 bytes, LE) || the data
 * padding 0xfe and 0x80..0xfd: skipped by readers; 0x02..0x7f: reserved, a reader must stop
 * </pre>
 *
 * Each frame holds at most 65536 bytes of uncompressed data; a frame that would not shrink by an
 * eighth is stored uncompressed (the rule of Go's snappy). Frame compression and decompression go
 * through snappy-java's native calls on the arrays themselves (pinned, not copied). Used by
 * {@code io.sealpipe}'s Snappy streams and by the compressed files of {@code io.sealpipe.hadoop}.
 */
public final class SnappyFraming {
    private SnappyFraming() {}

    public static final int COMPRESSED = 0x00;
    public static final int UNCOMPRESSED = 0x01;
    public static final int PADDING = 0xfe;
    public static final int STREAM_IDENTIFIER = 0xff;
    /** The whole stream identifier chunk. */
    public static final byte[] STREAM_HEADER = {(byte) 0xff, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y'};
    /** Uncompressed bytes per frame, the format's maximum. */
    public static final int BLOCK_SIZE = 65536;
    /** Chunk type and length. */
    public static final int CHUNK_HEADER = 4;
    public static final int CRC_LENGTH = 4;
    /** Type, length and CRC before a frame's data. */
    public static final int FRAME_HEADER = CHUNK_HEADER + CRC_LENGTH;
    /** The longest frame body a valid stream can have. */
    public static final int MAX_BODY = CRC_LENGTH + Snappy.maxCompressedLength(BLOCK_SIZE);

    private static final int MASK_DELTA = 0xa282ead8;

    /**
     * Frames a stream with this parallelism keeps in flight: 1 alone; else at least 16 (at two
     * threads fewer left the cores idle while the oldest frame was still being compressed) and 4
     * per thread, about 140 KiB each: 2.2 MiB up to parallelism 4, 4.5 MiB at 8.
     */
    public static int framesInFlight(int parallelism) {
        return parallelism == 1 ? 1 : Math.max(16, 4 * parallelism);
    }

    /** The masked CRC-32C of b[off, off + len) that frames carry. */
    public static int maskedCrc(CRC32C crc, byte[] b, int off, int len) {
        crc.reset();
        crc.update(b, off, len);
        int c = (int) crc.getValue();
        return ((c >>> 15) | (c << 17)) + MASK_DELTA;
    }

    /**
     * Writes the frame of in[off, off + len) (at most {@link #BLOCK_SIZE}) into {@code frame}
     * from index 0: compressed, or stored if compression does not save an eighth. Returns the
     * frame's length, or minus the header length if the frame is stored: then only the header
     * is in {@code frame} and the data follows it as {@code in} holds it.
     */
    public static int encodeFrame(byte[] in, int off, int len, byte[] frame, CRC32C crc) throws IOException {
        int checksum = maskedCrc(crc, in, off, len);
        int compressed = len == 0 ? 0 : Snappy.rawCompress(in, off, len, frame, FRAME_HEADER);
        if (len > 0 && compressed < len - len / 8) {
            putHeader(frame, COMPRESSED, CRC_LENGTH + compressed, checksum);
            return FRAME_HEADER + compressed;
        }
        putHeader(frame, UNCOMPRESSED, CRC_LENGTH + len, checksum);
        return -FRAME_HEADER;
    }

    private static void putHeader(byte[] frame, int type, int bodyLength, int checksum) {
        frame[0] = (byte) type;
        frame[1] = (byte) bodyLength;
        frame[2] = (byte) (bodyLength >>> 8);
        frame[3] = (byte) (bodyLength >>> 16);
        frame[4] = (byte) checksum;
        frame[5] = (byte) (checksum >>> 8);
        frame[6] = (byte) (checksum >>> 16);
        frame[7] = (byte) (checksum >>> 24);
    }

    /** The little-endian int at b[off, off + 4). */
    public static int intLe(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8 | (b[off + 2] & 0xff) << 16 | (b[off + 3] & 0xff) << 24;
    }

    /**
     * Decodes the body of a data frame (CRC, then data) of type {@code type} into out[outOff, ..)
     * (room for {@link #BLOCK_SIZE} bytes) and checks its CRC; returns the uncompressed length.
     * On any failure the output is zeroed and the exception names {@code frameIndex}.
     */
    public static int decodeFrame(int type, byte[] body, int bodyOff, int bodyLength, byte[] out, int outOff, CRC32C crc,
            long frameIndex) throws IOException {
        int dataLength = bodyLength - CRC_LENGTH;
        int n;
        if (type == UNCOMPRESSED) {
            if (dataLength > BLOCK_SIZE) {
                throw corrupt(frameIndex, "an uncompressed frame of " + dataLength + " bytes, more than the format's "
                        + BLOCK_SIZE);
            }
            System.arraycopy(body, bodyOff + CRC_LENGTH, out, outOff, dataLength);
            n = dataLength;
        } else {
            int expected;
            try {
                expected = Snappy.uncompressedLength(body, bodyOff + CRC_LENGTH, dataLength);
            } catch (IOException e) {
                throw corrupt(frameIndex, "its compressed data is not valid Snappy (" + e.getMessage() + ")");
            }
            if (expected < 0 || expected > BLOCK_SIZE) {
                throw corrupt(frameIndex, "it claims " + expected + " uncompressed bytes, more than the format's "
                        + BLOCK_SIZE);
            }
            try {
                n = Snappy.rawUncompress(body, bodyOff + CRC_LENGTH, dataLength, out, outOff);
            } catch (IOException e) {
                java.util.Arrays.fill(out, outOff, outOff + expected, (byte) 0);
                throw corrupt(frameIndex, "its compressed data is not valid Snappy (" + e.getMessage() + ")");
            }
        }
        if (maskedCrc(crc, out, outOff, n) != intLe(body, bodyOff)) {
            java.util.Arrays.fill(out, outOff, outOff + n, (byte) 0);
            throw corrupt(frameIndex, "its CRC-32C does not match its data");
        }
        return n;
    }

    public static IOException corrupt(long frameIndex, String what) {
        return new IOException("corrupt Snappy framed stream: frame " + frameIndex + ": " + what);
    }
}
