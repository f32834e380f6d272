package io.sealpipe.gcm;

import static io.sealpipe.CtrFixtures.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Chunked GCM round trips with fixed seeds on every engine: the sizes around chunk boundaries,
 * several MiB, odd write and read patterns, random seeks and concurrent positioned reads on
 * the random-access channel, and the exact ciphertext length the format prescribes.
 */
public class GcmRoundTripTest {
    static final int[] SIZES = {0, 1, 16383, 16384, 16385, 3 * 16384, 5 << 20};

    @TempDir
    Path dir;

    static Stream<Arguments> cases() {
        return TestEngines.kinds().flatMap(kind -> Arrays.stream(SIZES).mapToObj(size -> Arguments.of(kind, size)));
    }

    static GcmStreams gcm(EngineKind kind, int keyLength) {
        return GcmStreams.builder().key(bytes(32, keyLength)).context("shuffle_3_7_0".getBytes())
                .engine(TestEngines.engine(kind)).build();
    }

    static byte[] encrypt(GcmStreams gcm, byte[] plain) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = gcm.encrypt(sink)) {
            out.write(plain);
        }
        return sink.toByteArray();
    }

    public static long expectedLength(long plain) {
        return Cobblestone.HEADER_LENGTH + plain + (plain / Cobblestone.CHUNK_SIZE + 1) * Cobblestone.TAG_LENGTH;
    }

    @ParameterizedTest(name = "{0}, {1} bytes")
    @MethodSource("cases")
    void streamingAndRandomAccessRoundTrip(EngineKind kind, int size) throws IOException {
        for (int keyLength : new int[] {32, 16}) {
            GcmStreams gcm = gcm(kind, keyLength);
            byte[] plain = bytes(size + keyLength, size);
            byte[] sealed = encrypt(gcm, plain);
            assertEquals(expectedLength(size), sealed.length, "ciphertext length");
            try (InputStream in = gcm.decrypt(new ByteArrayInputStream(sealed))) {
                assertArrayEquals(plain, in.readAllBytes(), "streaming, key " + keyLength);
                assertEquals(-1, in.read());
            }
            ByteBuffer direct = ByteBuffer.allocateDirect(sealed.length + 7).position(7);
            direct.put(sealed).position(7);
            for (ByteBuffer memory : new ByteBuffer[] {ByteBuffer.wrap(sealed), direct,
                    ByteBuffer.wrap(sealed).asReadOnlyBuffer()}) {
                try (GcmInputStream in = gcm.decrypt(memory)) {
                    assertArrayEquals(plain, in.readAllBytes(), "from memory " + memory + ", key " + keyLength);
                    assertEquals(-1, in.read());
                }
                assertEquals(memory == direct ? 7 : 0, memory.position(), "the caller's buffer keeps its position");
            }
            Path file = dir.resolve("m" + keyLength + ".enc");
            Files.write(file, sealed);
            try (GcmSeekableChannel ch = gcm.open(FileChannel.open(file, StandardOpenOption.READ))) {
                assertEquals(size, ch.size());
                ByteBuffer all = ByteBuffer.allocate(size);
                while (all.hasRemaining() && ch.read(all) >= 0) {
                    // read on
                }
                assertArrayEquals(plain, all.array(), "random access, key " + keyLength);
                assertEquals(-1, ch.read(ByteBuffer.allocate(1)));
            }
        }
    }

    /** Every write pattern gives the same plaintext back, and every read pattern reads it. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void oddWriteAndReadPatterns(EngineKind kind) throws IOException {
        GcmStreams gcm = gcm(kind, 32);
        byte[] plain = bytes(99, 3 * 16384 + 4321);
        Random random = new Random(5);
        List<byte[]> ciphertexts = new ArrayList<>();

        ByteArrayOutputStream oneByte = new ByteArrayOutputStream();
        try (GcmOutputStream out = gcm.encrypt(oneByte)) {
            for (byte b : plain) {
                out.write(b);
            }
            assertEquals(plain.length, out.plaintextWritten());
        }
        ciphertexts.add(oneByte.toByteArray());

        ByteArrayOutputStream pieces = new ByteArrayOutputStream();
        try (GcmOutputStream out = gcm.encrypt(Channels.newChannel(pieces))) {
            for (int done = 0; done < plain.length; ) {
                int n = Math.min(plain.length - done, random.nextInt(40_000));
                if (random.nextBoolean()) {
                    out.write(plain, done, n);
                } else {
                    ByteBuffer direct = ByteBuffer.allocateDirect(n).put(plain, done, n).flip();
                    assertEquals(n, out.write(direct));
                }
                done += n;
                out.flush();
            }
        }
        ciphertexts.add(pieces.toByteArray());

        for (byte[] sealed : ciphertexts) {
            assertEquals(expectedLength(plain.length), sealed.length);
            try (GcmInputStream in = gcm.decrypt(new ByteArrayInputStream(sealed))) {
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                for (int b; (b = in.read()) >= 0; ) {
                    got.write(b);
                }
                assertArrayEquals(plain, got.toByteArray(), "read() each byte");
            }
            try (GcmInputStream in = gcm.decrypt(new OneByteAtATime(sealed))) {
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                byte[] b = new byte[70_000];
                for (int n; (n = in.read(b, 3, 1 + random.nextInt(b.length - 3))) >= 0; ) {
                    got.write(b, 3, n);
                }
                assertArrayEquals(plain, got.toByteArray(), "random lengths from a source giving one byte a call");
            }
            try (GcmInputStream in = gcm.decrypt(Channels.newChannel(new ByteArrayInputStream(sealed)))) {
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                ByteBuffer direct = ByteBuffer.allocateDirect(5000);
                while (in.read(direct.clear()) >= 0) {
                    direct.flip();
                    byte[] part = new byte[direct.remaining()];
                    direct.get(part);
                    got.write(part);
                }
                assertArrayEquals(plain, got.toByteArray(), "direct ByteBuffers from a channel");
            }
            try (GcmInputStream in = gcm.decrypt(new ByteArrayInputStream(sealed))) {
                assertEquals(20_000, in.skip(20_000));
                assertArrayEquals(Arrays.copyOfRange(plain, 20_000, plain.length), in.readAllBytes(), "skip then read");
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void randomSeeksAndConcurrentPositionedReads(EngineKind kind) throws Exception {
        GcmStreams gcm = gcm(kind, 32);
        byte[] plain = bytes(7, 10 * 16384 + 777);
        Path file = dir.resolve("r.enc");
        Files.write(file, encrypt(gcm, plain));
        Random random = new Random(42);
        try (GcmSeekableChannel ch = gcm.open(FileChannel.open(file, StandardOpenOption.READ))) {
            for (int op = 0; op < 500; op++) {
                int at = random.nextInt(plain.length + 100);
                int len = random.nextInt(3 * 16384);
                ch.position(at);
                ByteBuffer dst = ByteBuffer.allocate(len);
                int n = ch.read(dst);
                if (at >= plain.length || len == 0) {
                    assertTrue(n <= 0, "at " + at + " len " + len + " read " + n);
                    continue;
                }
                assertTrue(n > 0);
                assertArrayEquals(Arrays.copyOfRange(plain, at, at + n), Arrays.copyOf(dst.array(), n), "at " + at);
                assertEquals(at + n, ch.position());
            }
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    long seed = t;
                    futures.add(pool.submit(() -> {
                        Random r = new Random(seed);
                        for (int i = 0; i < 300; i++) {
                            int at = r.nextInt(plain.length);
                            int len = Math.min(plain.length - at, r.nextInt(40_000));
                            byte[] b = new byte[len];
                            ch.readFully(at, b, 0, len);
                            assertArrayEquals(Arrays.copyOfRange(plain, at, at + len), b, "positioned at " + at);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void eachMessageHasAFreshSaltSoEqualPlaintextsDiffer() throws IOException {
        GcmStreams gcm = GcmStreams.builder().key(bytes(1, 32)).build();
        byte[] plain = bytes(2, 1000);
        byte[] a = encrypt(gcm, plain);
        byte[] b = encrypt(gcm, plain);
        assertTrue(!Arrays.equals(Arrays.copyOf(a, 24), Arrays.copyOf(b, 24)), "salts differ");
        assertTrue(!Arrays.equals(a, b));
    }

    @Test
    void builderRejectsBadKeysNamingTheLength() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GcmStreams.builder().key(new byte[24]).build());
        assertTrue(e.getMessage().contains("16 or 32 bytes, not 24"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> GcmStreams.builder().build());
    }

    @Test
    void writesAfterCloseAndNoFinalChunkWithoutClose() throws IOException {
        GcmStreams gcm = GcmStreams.builder().key(bytes(1, 32)).build();
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        GcmOutputStream out = gcm.encrypt(sink);
        out.write(bytes(3, 20_000));
        out.flush();
        byte[] unfinished = sink.toByteArray(); // header and one full chunk: no final chunk yet
        assertEquals(Cobblestone.HEADER_LENGTH + Cobblestone.SEALED_CHUNK_SIZE, unfinished.length);
        StreamAuthenticationException e = assertThrows(StreamAuthenticationException.class,
                () -> gcm.decrypt(new ByteArrayInputStream(unfinished)).readAllBytes());
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        out.close();
        out.close(); // idempotent
        assertThrows(IOException.class, () -> out.write(1));
    }

    /** Gives at most one byte per read call. */
    static final class OneByteAtATime extends InputStream {
        private final byte[] data;
        private int pos;

        OneByteAtATime(byte[] data) {
            this.data = data;
        }

        @Override
        public int read() {
            return pos < data.length ? data[pos++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (len == 0) {
                return 0;
            }
            int c = read();
            if (c < 0) {
                return -1;
            }
            b[off] = (byte) c;
            return 1;
        }
    }
}
