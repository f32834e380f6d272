package io.sealpipe.snappy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.internal.SnappyFraming;
import io.sealpipe.internal.TextLikeData;
import io.sealpipe.snappy.PipelineRoundTripTest.Pipeline;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.xerial.snappy.SnappyFramedInputStream;
import org.xerial.snappy.SnappyFramedOutputStream;

/**
 * The compressed representation is standard x-snappy-framed: what we write (alone or after
 * decryption) is read by snappy-java's own framed reader, what snappy-java writes is read by
 * ours (alone or encrypted with ours), and our reader handles and rejects the format's corner
 * cases as the framing specification says.
 */
class SnappyInteropTest {

    static byte[] data(int size, boolean text) {
        if (text) {
            return TextLikeData.generate(size, size);
        }
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        return b;
    }

    static byte[] ourCompress(byte[] plain, int parallelism) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = SnappyStreams.builder().parallelism(parallelism).build().compress(sink)) {
            out.write(plain);
        }
        return sink.toByteArray();
    }

    static byte[] ourDecompress(byte[] framed) throws IOException {
        try (InputStream in = SnappyStreams.builder().build().decompress(new ByteArrayInputStream(framed))) {
            return in.readAllBytes();
        }
    }

    static byte[] snappyJavaCompress(byte[] plain) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (SnappyFramedOutputStream out = new SnappyFramedOutputStream(sink)) {
            out.write(plain);
        }
        return sink.toByteArray();
    }

    static byte[] snappyJavaDecompress(InputStream framed) throws IOException {
        try (SnappyFramedInputStream in = new SnappyFramedInputStream(framed, true)) {
            return in.readAllBytes();
        }
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {0, 1, 65535, 65536, 65537, 3 << 20})
    void snappyJavaReadsWhatWeWrite(int size) throws IOException {
        for (boolean text : new boolean[] {true, false}) {
            byte[] plain = data(size, text);
            for (int parallelism : new int[] {1, 2}) {
                byte[] framed = ourCompress(plain, parallelism);
                assertArrayEquals(plain, snappyJavaDecompress(new ByteArrayInputStream(framed)),
                        "text " + text + ", parallelism " + parallelism);
            }
        }
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {0, 1, 65535, 65536, 65537, 3 << 20})
    void weReadWhatSnappyJavaWrites(int size) throws IOException {
        for (boolean text : new boolean[] {true, false}) {
            byte[] plain = data(size, text);
            assertArrayEquals(plain, ourDecompress(snappyJavaCompress(plain)), "text " + text);
        }
    }

    @Test
    void afterDecryptionAnyFramedReaderDecodes() throws IOException {
        byte[] plain = data(5 << 20, true);
        for (Pipeline.Mode mode : Pipeline.Mode.values()) {
            for (int parallelism : new int[] {1, 2}) {
                Pipeline p = Pipeline.of(mode, true, parallelism);
                byte[] sealed = p.encrypt(plain, PipelineRoundTripTest.Writes.ONE_WRITE);
                InputStream decrypted = mode == Pipeline.Mode.GCM ? p.gcm().decrypt(new ByteArrayInputStream(sealed))
                        : p.ctr().decrypt(new ByteArrayInputStream(sealed));
                assertArrayEquals(plain, snappyJavaDecompress(decrypted), mode + ", parallelism " + parallelism);
            }
        }
    }

    @Test
    void weDecryptAndDecodeASnappyJavaStream() throws IOException {
        byte[] plain = data(5 << 20, true);
        for (Pipeline.Mode mode : Pipeline.Mode.values()) {
            Pipeline p = Pipeline.of(mode, true, 2);
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            OutputStream encrypting = mode == Pipeline.Mode.GCM ? p.gcm().encrypt(sink) : p.ctr().encrypt(sink);
            try (SnappyFramedOutputStream out = new SnappyFramedOutputStream(encrypting)) {
                out.write(plain);
            }
            assertArrayEquals(plain, p.decrypt(sink.toByteArray(), 100_000), mode.toString());
        }
    }

    @Test
    void incompressibleFramesAreStored() throws IOException {
        byte[] plain = data(200_000, false);
        byte[] framed = ourCompress(plain, 1);
        assertEquals(10 + 4 * 8 + plain.length, framed.length, "4 stored frames: header, CRC and the data as it is");
        assertEquals(SnappyFraming.UNCOMPRESSED, framed[10]);
    }

    // The framing format's corner cases, on hand-made streams.

    private static byte[] chunk(int type, byte[] body) {
        byte[] c = new byte[4 + body.length];
        c[0] = (byte) type;
        c[1] = (byte) body.length;
        c[2] = (byte) (body.length >>> 8);
        c[3] = (byte) (body.length >>> 16);
        System.arraycopy(body, 0, c, 4, body.length);
        return c;
    }

    private static byte[] storedFrame(byte[] data, int crcDelta) {
        byte[] body = new byte[4 + data.length];
        int crc = SnappyFraming.maskedCrc(new CRC32C(), data, 0, data.length) + crcDelta;
        for (int i = 0; i < 4; i++) {
            body[i] = (byte) (crc >>> (8 * i));
        }
        System.arraycopy(data, 0, body, 4, data.length);
        return chunk(SnappyFraming.UNCOMPRESSED, body);
    }

    private static byte[] concat(byte[]... parts) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.write(p);
        }
        return out.toByteArray();
    }

    @Test
    void paddingSkippableChunksAndRepeatedIdentifiersAreAccepted() throws IOException {
        byte[] hello = "hello ".getBytes();
        byte[] world = "world".getBytes();
        byte[] stream = concat(SnappyFraming.STREAM_HEADER, storedFrame(hello, 0), chunk(0xfe, new byte[100]),
                chunk(0x80, new byte[3]), SnappyFraming.STREAM_HEADER, storedFrame(world, 0), chunk(0xfd, new byte[0]));
        assertArrayEquals("hello world".getBytes(), ourDecompress(stream));
    }

    private static void rejected(byte[] stream, String message) {
        IOException e = assertThrows(IOException.class, () -> ourDecompress(stream));
        assertTrue(e.getMessage().contains(message), "expected '" + message + "' in: " + e.getMessage());
    }

    @Test
    void badStreamsAreRejectedWithTheReason() throws IOException {
        byte[] data = "some data".getBytes();
        rejected(new byte[0], "it is empty");
        rejected(storedFrame(data, 0), "not the stream identifier");
        rejected(concat(chunk(0xff, "sNaPpX".getBytes()), storedFrame(data, 0)), "stream identifier chunk is not");
        rejected(concat(SnappyFraming.STREAM_HEADER, chunk(0x02, new byte[4])), "reserved unskippable chunk of type 0x02");
        rejected(concat(SnappyFraming.STREAM_HEADER, storedFrame(data, 1)), "frame 0: its CRC-32C does not match");
        rejected(concat(SnappyFraming.STREAM_HEADER, storedFrame(new byte[65537], 0)), "more than the format's 65536");
        rejected(concat(SnappyFraming.STREAM_HEADER, chunk(SnappyFraming.COMPRESSED, new byte[] {0, 0, 0, 0, (byte) 0xff,
                (byte) 0xff, 0x7f})), "frame 0");
        byte[] whole = concat(SnappyFraming.STREAM_HEADER, storedFrame(data, 0));
        rejected(java.util.Arrays.copyOf(whole, whole.length - 1), "truncated Snappy framed stream: it ends in frame 0");
        rejected(java.util.Arrays.copyOf(whole, 12), "truncated Snappy framed stream: it ends in a chunk header");
        rejected(concat(SnappyFraming.STREAM_HEADER, chunk(SnappyFraming.UNCOMPRESSED, new byte[2])), "a body of 2 bytes");
    }

    @Test
    void compressedFrameClaimingMoreThan64KiBIsRejected() throws IOException {
        byte[] big = org.xerial.snappy.Snappy.compress(new byte[70_000]);
        byte[] body = new byte[4 + big.length];
        System.arraycopy(big, 0, body, 4, big.length);
        rejected(concat(SnappyFraming.STREAM_HEADER, chunk(SnappyFraming.COMPRESSED, body)), "it claims 70000 uncompressed bytes");
    }
}
