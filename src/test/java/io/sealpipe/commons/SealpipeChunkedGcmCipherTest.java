package io.sealpipe.commons;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.TestEngines;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.util.Arrays;
import java.util.Properties;
import java.util.Random;
import java.util.stream.Stream;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.commons.crypto.cipher.CryptoCipher;
import org.apache.commons.crypto.cipher.CryptoCipherFactory;
import org.apache.commons.crypto.stream.CryptoInputStream;
import org.apache.commons.crypto.stream.CryptoOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link SealpipeChunkedGcmCipher} under Commons Crypto's own streams, as Spark uses it: made by
 * Commons Crypto's factory from the properties of each stream, on every GCM engine. What it
 * writes is a standard chunked message that {@link GcmStreams} reads with the key and the
 * context the format names, and the other way round; every tampering fails the read with
 * {@link StreamAuthenticationException} itself, and a read that stops at the plaintext's length
 * still reaches the final check.
 */
class SealpipeChunkedGcmCipherTest {
    private static final String SPARK_TRANSFORMATION = "AES/CTR/NoPadding";
    private static final int CHUNK = 16 * 1024;
    private static final int SEALED_CHUNK = CHUNK + 16;
    private static final int HEADER = 56;
    private static final int[] SIZES = {0, 1, 100, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 5, 200_003};

    static Stream<Arguments> enginesAndKeys() {
        return TestEngines.kinds().filter(k -> k.supports(Operation.GCM_SEAL))
                .flatMap(kind -> Stream.of(16, 32).map(keyLength -> Arguments.of(kind, keyLength)));
    }

    private static byte[] bytes(long seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** The properties Spark passes: the cipher class only (Spark's {@code commons.config} prefix stripped). */
    private static Properties props() {
        Properties p = new Properties();
        p.setProperty(CryptoCipherFactory.CLASSES_KEY, SealpipeChunkedGcmCipher.class.getName());
        return p;
    }

    /** Writes as Spark's CryptoStreamUtils does: a stream made by name, written in uneven pieces. */
    private static byte[] write(Properties p, SecretKeySpec key, byte[] iv, byte[] plain) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (CryptoOutputStream out = new CryptoOutputStream(SPARK_TRANSFORMATION, p, sink, key, new IvParameterSpec(iv))) {
            int at = 0;
            for (int step = 1; at < plain.length; step = step * 5 + 3) {
                int n = Math.min(step, plain.length - at);
                out.write(plain, at, n);
                at += n;
            }
        }
        return sink.toByteArray();
    }

    private static InputStream reader(Properties p, SecretKeySpec key, byte[] iv, byte[] sealed) throws IOException {
        return new CryptoInputStream(SPARK_TRANSFORMATION, p, new ByteArrayInputStream(sealed), key, new IvParameterSpec(iv));
    }

    private static byte[] read(Properties p, SecretKeySpec key, byte[] iv, byte[] sealed) throws IOException {
        try (InputStream in = reader(p, key, iv, sealed)) {
            return in.readAllBytes();
        }
    }

    private static byte[] context(byte[] iv) {
        byte[] label = "io.sealpipe.commons.SealpipeChunkedGcmCipher\0".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        byte[] context = Arrays.copyOf(label, label.length + iv.length);
        System.arraycopy(iv, 0, context, label.length, iv.length);
        return context;
    }

    /**
     * The cipher on one engine, in Commons Crypto's streams (the factory cannot pass an engine;
     * the streams' constructors that take a cipher are protected, hence the subclasses).
     */
    private static byte[] writeOn(EngineKind kind, SecretKeySpec key, byte[] iv, byte[] plain) throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        Properties p = new Properties();
        CryptoCipher cipher = new SealpipeChunkedGcmCipher(p, SPARK_TRANSFORMATION, TestEngines.engine(kind));
        try (CryptoOutputStream out = new CryptoOutputStream(sink, cipher, bufferSize(p), key, new IvParameterSpec(iv)) {}) {
            out.write(plain);
        }
        return sink.toByteArray();
    }

    private static byte[] readOn(EngineKind kind, SecretKeySpec key, byte[] iv, byte[] sealed) throws Exception {
        Properties p = new Properties();
        CryptoCipher cipher = new SealpipeChunkedGcmCipher(p, SPARK_TRANSFORMATION, TestEngines.engine(kind));
        try (InputStream in = new CryptoInputStream(new ByteArrayInputStream(sealed), cipher, bufferSize(p), key,
                new IvParameterSpec(iv)) {}) {
            return in.readAllBytes();
        }
    }

    private static int bufferSize(Properties p) {
        return Integer.parseInt(p.getProperty(SealpipeChunkedGcmCipher.BUFFER_SIZE_KEY));
    }

    /**
     * Vectors first: on each engine and key size, what the cipher writes in Commons Crypto's
     * stream is the chunked message of {@link GcmStreams} (itself checked against the format's
     * vectors) with the context label || IV: that reads it, and the cipher reads what it writes.
     */
    @ParameterizedTest(name = "{0}, {1}-byte key")
    @MethodSource("enginesAndKeys")
    void writesAndReadsTheChunkedFormatWithTheIvInItsContext(EngineKind kind, int keyLength) throws Exception {
        byte[] keyBytes = bytes(keyLength, keyLength);
        SecretKeySpec key = new SecretKeySpec(keyBytes, "AES");
        byte[] iv = bytes(3, 16);
        GcmStreams reference = GcmStreams.builder().key(keyBytes).context(context(iv)).build();
        for (int size : SIZES) {
            byte[] plain = bytes(size, size);
            byte[] sealed = writeOn(kind, key, iv, plain);
            assertEquals(GcmStreams.ciphertextLength(size), sealed.length, size + " bytes: the format's length");
            try (InputStream in = reference.decrypt(new ByteArrayInputStream(sealed))) {
                assertArrayEquals(plain, in.readAllBytes(), size + " bytes, read by GcmStreams");
            }
            assertArrayEquals(plain, readOn(kind, key, iv, sealed), size + " bytes, read by the cipher");
            ByteArrayOutputStream byReference = new ByteArrayOutputStream();
            try (OutputStream out = reference.encrypt(byReference)) {
                out.write(plain);
            }
            assertArrayEquals(plain, readOn(kind, key, iv, byReference.toByteArray()), size + " bytes by GcmStreams");
        }
    }

    /** As Spark makes its streams: by name, with the buffer size the cipher sets. */
    @Test
    void commonsCryptosFactoryAndStreamsTakeItByNameAndItSetsTheBufferSize() throws Exception {
        Properties p = props();
        try (CryptoCipher c = CryptoCipherFactory.getCryptoCipher(SPARK_TRANSFORMATION, p)) {
            assertInstanceOf(SealpipeChunkedGcmCipher.class, c);
            assertEquals(SealpipeChunkedGcmCipher.MIN_BUFFER_SIZE, c.getBlockSize());
        }
        assertEquals("32768", p.getProperty(SealpipeChunkedGcmCipher.BUFFER_SIZE_KEY), "set when absent");
        SecretKeySpec key = new SecretKeySpec(bytes(1, 16), "AES");
        byte[] iv = bytes(2, 16);
        for (int size : SIZES) {
            byte[] plain = bytes(size, size);
            assertArrayEquals(plain, read(props(), key, iv, write(props(), key, iv, plain)), size + " bytes");
        }
        Properties bigger = props();
        bigger.setProperty(SealpipeChunkedGcmCipher.BUFFER_SIZE_KEY, "100000");
        byte[] plain = bytes(4, 300_001);
        assertArrayEquals(plain, read(bigger, key, iv, write(bigger, key, iv, plain)), "a 100000-byte buffer");
    }

    /**
     * Flushes at odd points (Spark flushes before it closes a segment), single bytes, and a
     * channel of direct buffers: the message is the same as one written at once (the salt
     * aside), since a flush cannot end a chunk.
     */
    @Test
    void flushesAndChannelWritesGiveAWholeMessage() throws Exception {
        SecretKeySpec key = new SecretKeySpec(bytes(5, 32), "AES");
        byte[] iv = bytes(6, 16);
        byte[] plain = bytes(7, 3 * CHUNK + 999);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (CryptoOutputStream out = new CryptoOutputStream(SPARK_TRANSFORMATION, props(), sink, key,
                new IvParameterSpec(iv))) {
            out.write(plain[0]);
            out.flush();
            out.flush();
            out.write(plain, 1, 20_000);
            out.flush();
            for (int i = 20_001; i < 20_100; i++) {
                out.write(plain[i]);
            }
            ByteBuffer direct = ByteBuffer.allocateDirect(plain.length - 20_100);
            direct.put(plain, 20_100, plain.length - 20_100).flip();
            out.write(direct);
            out.flush();
        }
        byte[] sealed = sink.toByteArray();
        assertEquals(GcmStreams.ciphertextLength(plain.length), sealed.length);
        assertArrayEquals(plain, read(props(), key, iv, sealed));

        ByteArrayOutputStream viaChannel = new ByteArrayOutputStream();
        try (WritableByteChannel ch = Channels.newChannel(viaChannel);
                CryptoOutputStream out = new CryptoOutputStream(SPARK_TRANSFORMATION, props(), ch, key,
                        new IvParameterSpec(iv))) {
            out.write(ByteBuffer.wrap(plain));
        }
        assertArrayEquals(plain, read(props(), key, iv, viaChannel.toByteArray()));
    }

    /** Flip, cut, swap, extend, another IV or key: the read throws the exception itself, never wrong bytes. */
    @Test
    void everyTamperingFailsTheReadWithStreamAuthenticationException() throws Exception {
        SecretKeySpec key = new SecretKeySpec(bytes(8, 16), "AES");
        byte[] iv = bytes(9, 16);
        byte[] plain = bytes(10, 3 * CHUNK + 500);
        byte[] sealed = write(props(), key, iv, plain);
        int chunk1 = HEADER + SEALED_CHUNK;
        int chunk2 = HEADER + 2 * SEALED_CHUNK;

        byte[] flipped = sealed.clone();
        flipped[chunk1 + 100] ^= 1;
        assertFails("a flipped byte in chunk 1", 1, flipped, key, iv);
        byte[] flippedSalt = sealed.clone();
        flippedSalt[3] ^= 1;
        assertFails("a flipped byte of the salt", -1, flippedSalt, key, iv);
        assertFails("cut at a chunk boundary", -1, Arrays.copyOf(sealed, chunk2), key, iv);
        assertFails("cut inside the final chunk's tag", 3, Arrays.copyOf(sealed, sealed.length - 1), key, iv);
        assertFails("cut inside the header", -1, Arrays.copyOf(sealed, 40), key, iv);
        assertFails("nothing at all", -1, new byte[0], key, iv);
        byte[] swapped = sealed.clone();
        System.arraycopy(sealed, chunk1, swapped, chunk2, SEALED_CHUNK);
        System.arraycopy(sealed, chunk2, swapped, chunk1, SEALED_CHUNK);
        assertFails("chunks 1 and 2 swapped", 1, swapped, key, iv);
        byte[] dropped = new byte[sealed.length - SEALED_CHUNK];
        System.arraycopy(sealed, 0, dropped, 0, chunk1);
        System.arraycopy(sealed, chunk2, dropped, chunk1, sealed.length - chunk2);
        assertFails("chunk 1 dropped", 1, dropped, key, iv);
        byte[] repeated = new byte[sealed.length + SEALED_CHUNK];
        System.arraycopy(sealed, 0, repeated, 0, chunk2);
        System.arraycopy(sealed, chunk1, repeated, chunk2, sealed.length - chunk1);
        assertFails("chunk 1 repeated", 2, repeated, key, iv);
        byte[] extended = Arrays.copyOf(sealed, sealed.length + 16);
        assertFails("16 bytes appended", 3, extended, key, iv);
        byte[] otherIv = iv.clone();
        otherIv[15] ^= 1;
        assertFails("another IV", -1, sealed, key, otherIv);
        assertFails("another key", -1, sealed, new SecretKeySpec(bytes(11, 16), "AES"), iv);

        // Positive control: the untouched message reads back.
        assertArrayEquals(plain, read(props(), key, iv, sealed));
    }

    private static void assertFails(String what, long chunk, byte[] sealed, SecretKeySpec key, byte[] iv) throws IOException {
        try (InputStream in = reader(props(), key, iv, sealed)) {
            byte[] got = new byte[sealed.length + CHUNK];
            int n = 0;
            StreamAuthenticationException e = null;
            try {
                for (int r; (r = in.read(got, n, got.length - n)) > 0; ) {
                    n += r;
                }
            } catch (StreamAuthenticationException thrown) {
                e = thrown;
            }
            assertNotNull(e, what + ": read " + n + " bytes without an authentication failure");
            assertEquals(chunk, e.chunk(), what + ": " + e.getMessage());
            assertThrows(StreamAuthenticationException.class, () -> in.read(), what + ": a later read() fails again");
            assertThrows(StreamAuthenticationException.class, () -> in.read(got, 0, 10), what + ": and read(byte[])");
            assertThrows(StreamAuthenticationException.class, () -> in.skip(10), what + ": and skip");
            assertThrows(StreamAuthenticationException.class, () -> ((java.nio.channels.ReadableByteChannel) in)
                    .read(ByteBuffer.allocate(10)), what + ": and read(ByteBuffer)");
        }
    }

    /**
     * A reader that stops at the plaintext's length (as Spark's DiskStore and spill readers do)
     * still reaches the final chunk: a message cut after its full chunks fails there, though the
     * bytes read are all the plaintext has.
     */
    @Test
    void aReadOfExactlyThePlaintextLengthStillChecksTheFinalChunk() throws Exception {
        SecretKeySpec key = new SecretKeySpec(bytes(12, 16), "AES");
        byte[] iv = bytes(13, 16);
        for (int size : new int[] {CHUNK, 2 * CHUNK, 3 * CHUNK + 7}) {
            byte[] plain = bytes(size, size);
            byte[] sealed = write(props(), key, iv, plain);
            try (DataInputStream in = new DataInputStream(reader(props(), key, iv, sealed))) {
                byte[] got = new byte[size];
                in.readFully(got); // positive control: the whole message
                assertArrayEquals(plain, got);
            }
            int cut = HEADER + (size / CHUNK) * SEALED_CHUNK; // the final chunk dropped
            try (DataInputStream in = new DataInputStream(reader(props(), key, iv, Arrays.copyOf(sealed, cut)))) {
                byte[] got = new byte[size - size % CHUNK];
                StreamAuthenticationException e = assertThrows(StreamAuthenticationException.class,
                        () -> in.readFully(got), size + " bytes, final chunk cut");
                assertTrue(e.getMessage().startsWith("truncated message"), e.getMessage());
            }
        }
    }

    /**
     * Spark's other read path, a channel read with {@code read(ByteBuffer)} up to the plaintext's
     * length ({@code CryptoStreamUtils.createReadableChannel}, for cached blocks), and single
     * bytes, skips and {@code available} mixed: the plaintext, and a damaged stream fails there too.
     */
    @Test
    void channelReadsAndSingleBytesAndSkipsReadThePlaintext() throws Exception {
        SecretKeySpec key = new SecretKeySpec(bytes(22, 16), "AES");
        byte[] iv = bytes(23, 16);
        byte[] plain = bytes(24, 2 * CHUNK);
        byte[] sealed = write(props(), key, iv, plain);
        ByteBuffer got = ByteBuffer.allocate(plain.length);
        try (CryptoInputStream in = new CryptoInputStream(SPARK_TRANSFORMATION, props(),
                Channels.newChannel(new ByteArrayInputStream(sealed)), key, new IvParameterSpec(iv))) {
            while (got.hasRemaining()) {
                assertTrue(in.read(got) >= 0, "no end before the plaintext's length");
            }
        }
        assertArrayEquals(plain, got.array());
        byte[] cut = Arrays.copyOf(sealed, HEADER + 2 * SEALED_CHUNK); // the empty final chunk dropped
        try (CryptoInputStream in = new CryptoInputStream(SPARK_TRANSFORMATION, props(),
                Channels.newChannel(new ByteArrayInputStream(cut)), key, new IvParameterSpec(iv))) {
            ByteBuffer all = ByteBuffer.allocate(plain.length);
            assertThrows(StreamAuthenticationException.class, () -> {
                while (all.hasRemaining()) {
                    in.read(all);
                }
            }, "the read up to the plaintext's length reaches the missing end");
            assertEquals(CHUNK, all.position(), "chunk 0 only: chunk 1 is held until the end");
        }

        ByteArrayOutputStream back = new ByteArrayOutputStream();
        try (InputStream in = reader(props(), key, iv, sealed)) {
            int at = 0;
            while (at < plain.length) {
                if (at % 5000 == 17) {
                    long skipped = in.skip(100);
                    back.write(plain, at, (int) skipped); // skipped bytes are not returned: take them from the plaintext
                    at += (int) skipped;
                    continue;
                }
                assertTrue(in.available() >= 0);
                int b = in.read();
                assertTrue(b >= 0, "byte " + at);
                back.write(b);
                at++;
            }
            assertEquals(-1, in.read(), "the end");
        }
        assertArrayEquals(plain, back.toByteArray());
    }

    /** The cipher's array calls give the bytes its buffer calls give, and read back. */
    @Test
    void arrayCallsMatchBufferCalls() throws Exception {
        SecretKeySpec key = new SecretKeySpec(bytes(14, 32), "AES");
        byte[] iv = bytes(15, 16);
        byte[] plain = bytes(16, 2 * CHUNK + 3);
        try (CryptoCipher c = new SealpipeChunkedGcmCipher(new Properties(), "AES/GCM/NoPadding")) {
            c.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(iv));
            byte[] out = new byte[plain.length + 200];
            int n = c.update(plain, 0, 10, out, 0);
            assertEquals(HEADER, n, "the header, and no whole chunk yet");
            n += c.update(plain, 10, CHUNK, out, n);
            assertEquals(HEADER + SEALED_CHUNK, n, "the header and the first chunk");
            n += c.doFinal(plain, 10 + CHUNK, plain.length - 10 - CHUNK, out, n);
            byte[] sealed = Arrays.copyOf(out, n);
            assertArrayEquals(plain, read(props(), key, iv, sealed));

            // In place, as a JCE cipher allows: the output runs ahead of the input, so it is copied first.
            c.init(Cipher.DECRYPT_MODE, key, new IvParameterSpec(iv));
            byte[] buf = Arrays.copyOf(sealed, sealed.length);
            int m = c.doFinal(buf, 0, buf.length, buf, 0);
            assertArrayEquals(plain, Arrays.copyOf(buf, m));
        }
    }

    /**
     * Decrypting, {@code update} releases a chunk only when the next one is authenticated, and
     * writes nothing of a chunk that fails, nor of the one held before it.
     */
    @Test
    void decryptionHoldsBackTheLastChunkAndReleasesNothingUnauthenticated() throws Exception {
        SecretKeySpec key = new SecretKeySpec(bytes(17, 16), "AES");
        byte[] iv = bytes(18, 16);
        byte[] plain = bytes(19, 3 * CHUNK);
        byte[] sealed = write(props(), key, iv, plain);
        try (CryptoCipher c = new SealpipeChunkedGcmCipher(new Properties(), SPARK_TRANSFORMATION)) {
            c.init(Cipher.DECRYPT_MODE, key, new IvParameterSpec(iv));
            ByteBuffer out = ByteBuffer.allocate(plain.length);
            assertEquals(0, c.update(ByteBuffer.wrap(sealed, 0, HEADER + SEALED_CHUNK), out), "chunk 0 held");
            for (int i = 1; i < 3; i++) {
                assertEquals(CHUNK, c.update(ByteBuffer.wrap(sealed, HEADER + i * SEALED_CHUNK, SEALED_CHUNK), out),
                        "chunk " + (i - 1) + " released once chunk " + i + " verified");
            }
            int rest = sealed.length - HEADER - 3 * SEALED_CHUNK;
            assertEquals(16, rest, "an empty final chunk");
            assertEquals(CHUNK, c.doFinal(ByteBuffer.wrap(sealed, HEADER + 3 * SEALED_CHUNK, rest), out),
                    "chunk 2 released once the final chunk verified");
            assertArrayEquals(plain, out.array());
        }
        byte[] bad = sealed.clone();
        bad[HEADER + 2 * SEALED_CHUNK + 5] ^= 1; // chunk 2
        try (CryptoCipher c = new SealpipeChunkedGcmCipher(new Properties(), SPARK_TRANSFORMATION)) {
            c.init(Cipher.DECRYPT_MODE, key, new IvParameterSpec(iv));
            ByteBuffer out = ByteBuffer.allocate(plain.length);
            assertEquals(CHUNK, c.update(ByteBuffer.wrap(bad, 0, HEADER + 2 * SEALED_CHUNK), out), "chunk 0");
            assertThrows(StreamAuthenticationException.class,
                    () -> c.update(ByteBuffer.wrap(bad, HEADER + 2 * SEALED_CHUNK, SEALED_CHUNK), out));
            assertEquals(CHUNK, out.position(), "only chunk 0 was released: chunk 1, held, never is");
            assertThrows(StreamAuthenticationException.class, () -> c.doFinal(ByteBuffer.allocate(0), out),
                    "and the failure stays");
        }
    }

    @Test
    void aSmallerBufferSizeIsRefusedSayingWhatToSet() throws Exception {
        Properties p = props();
        p.setProperty(SealpipeChunkedGcmCipher.BUFFER_SIZE_KEY, "8192");
        GeneralSecurityException e = assertThrows(GeneralSecurityException.class,
                () -> CryptoCipherFactory.getCryptoCipher(SPARK_TRANSFORMATION, p));
        Throwable cause = e;
        while (cause.getCause() != null) { // the factory's, then reflection's
            cause = cause.getCause();
        }
        assertInstanceOf(java.security.InvalidParameterException.class, cause, e.toString());
        assertTrue(cause.getMessage().contains("spark.io.encryption.commons.config.stream.buffer.size")
                && cause.getMessage().contains("32768"), cause.getMessage());

        // A stream made with an explicit small buffer around a cipher made for 32 KiB: an error, not
        // a loop; and its close() fails rather than finish a message without the bytes written.
        CryptoCipher cipher = new SealpipeChunkedGcmCipher(new Properties(), SPARK_TRANSFORMATION);
        SecretKeySpec key = new SecretKeySpec(bytes(20, 16), "AES");
        byte[] iv = bytes(21, 16);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        CryptoOutputStream out = new CryptoOutputStream(sink, cipher, 8192, key, new IvParameterSpec(iv)) {};
        IOException thrown = assertThrows(IOException.class, () -> out.write(new byte[10]));
        assertTrue(thrown.getMessage().contains("stream.buffer.size"), thrown.getMessage());
        IOException closing = assertThrows(IOException.class, out::close, "close() fails too");
        assertTrue(closing.getMessage().contains("failed earlier"), closing.getMessage());
        assertThrows(StreamAuthenticationException.class, () -> read(props(), key, iv, sink.toByteArray()),
                "what the stream left (" + sink.size() + " bytes) is no whole message");
    }

    /**
     * A failure that is not an authentication failure (here, too little room) sticks as well,
     * decrypting: the next call throws again and leaves nothing in the output to read.
     */
    @Test
    void everyFailureSticksAndLeavesNothingToRead() throws Exception {
        SecretKeySpec key = new SecretKeySpec(bytes(25, 16), "AES");
        byte[] iv = bytes(26, 16);
        byte[] sealed = write(props(), key, iv, bytes(27, 3 * CHUNK));
        try (CryptoCipher c = new SealpipeChunkedGcmCipher(new Properties(), SPARK_TRANSFORMATION)) {
            c.init(Cipher.DECRYPT_MODE, key, new IvParameterSpec(iv));
            ByteBuffer out = ByteBuffer.allocate(CHUNK - 1);
            assertThrows(javax.crypto.ShortBufferException.class, () -> c.update(ByteBuffer.wrap(sealed), out));
            assertEquals(0, out.remaining(), "nothing to read");
            ByteBuffer more = ByteBuffer.allocate(10 * CHUNK);
            IOException again = assertThrows(IOException.class, () -> c.update(ByteBuffer.wrap(sealed), more));
            assertTrue(again.getMessage().contains("failed earlier"), again.getMessage());
            assertEquals(0, more.remaining());
            assertThrows(IOException.class, () -> c.doFinal(ByteBuffer.allocate(0), ByteBuffer.allocate(10 * CHUNK)));
            // init starts afresh
            c.init(Cipher.DECRYPT_MODE, key, new IvParameterSpec(iv));
            assertEquals(3 * CHUNK, c.doFinal(ByteBuffer.wrap(sealed), ByteBuffer.allocate(3 * CHUNK)));
            assertThrows(IllegalStateException.class, () -> c.update(ByteBuffer.allocate(1), ByteBuffer.allocate(10)),
                    "after doFinal the keys are gone: init again");
        }
    }

    @Test
    void keysOtherThanAes128And256AreRefusedNamingSparksSetting() throws Exception {
        try (CryptoCipher c = new SealpipeChunkedGcmCipher(new Properties(), SPARK_TRANSFORMATION)) {
            InvalidKeyException e = assertThrows(InvalidKeyException.class, () -> c.init(Cipher.ENCRYPT_MODE,
                    new SecretKeySpec(new byte[24], "AES"), new IvParameterSpec(new byte[16])));
            assertTrue(e.getMessage().contains("spark.io.encryption.keySizeBits"), e.getMessage());
            assertThrows(GeneralSecurityException.class, () -> c.init(Cipher.ENCRYPT_MODE,
                    new SecretKeySpec(new byte[16], "AES"), new IvParameterSpec(new byte[12])));
        }
        for (String t : new String[] {"AES/CBC/PKCS5Padding", "DES/CTR/NoPadding", null}) {
            assertThrows(GeneralSecurityException.class, () -> new SealpipeChunkedGcmCipher(new Properties(), t));
        }
    }

    @Test
    void closedCiphersRefuseEveryCall() throws Exception {
        CryptoCipher c = new SealpipeChunkedGcmCipher(new Properties(), SPARK_TRANSFORMATION);
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(new byte[16], "AES"), new IvParameterSpec(new byte[16]));
        c.close();
        c.close();
        assertThrows(IllegalStateException.class, () -> c.update(ByteBuffer.allocate(1), ByteBuffer.allocate(100)));
        assertThrows(IllegalStateException.class, () -> c.init(Cipher.ENCRYPT_MODE,
                new SecretKeySpec(new byte[16], "AES"), new IvParameterSpec(new byte[16])));
    }
}
