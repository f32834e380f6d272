package io.sealpipe.gcm;

import static io.sealpipe.CtrFixtures.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.PositionedInput;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link GcmStreams#open(PositionedInput, long, int)} (random access over positioned reads, as
 * a Hadoop stream gives them), on every engine: every read pattern returns the plaintext with
 * and without the chunk cache, the channel's own reads go to
 * {@link PositionedInput#readSequentially} and the positioned ones to {@link PositionedInput#read},
 * the cache decrypts each chunk once, and tampering, a length that is not the message's and a
 * wrong key fail. Also the length rules of {@link GcmStreams#plaintextLength} and
 * {@link GcmStreams#ciphertextLength}, and {@link GcmStreams#matchesHeader}.
 */
class GcmPositionedInputTest {
    private static final int CHUNK = 16384;
    private static final byte[] KEY = bytes(1, 32);

    /** Positioned reads of at most {@code step} bytes over an array, counting each kind of call. */
    private static final class CountingInput implements PositionedInput {
        final byte[] data;
        final int step;
        final AtomicInteger positioned = new AtomicInteger();
        final AtomicInteger sequential = new AtomicInteger();

        CountingInput(byte[] data, int step) {
            this.data = data;
            this.step = step;
        }

        @Override
        public int read(long position, byte[] buffer, int offset, int length) {
            positioned.incrementAndGet();
            return copy(position, buffer, offset, length);
        }

        @Override
        public int readSequentially(long position, byte[] buffer, int offset, int length) {
            sequential.incrementAndGet();
            return copy(position, buffer, offset, length);
        }

        private int copy(long position, byte[] buffer, int offset, int length) {
            if (position >= data.length) {
                return -1;
            }
            int n = (int) Math.min(Math.min(length, step), data.length - position);
            System.arraycopy(data, (int) position, buffer, offset, n);
            return n;
        }
    }

    private static byte[] seal(GcmStreams gcm, byte[] plain) throws IOException {
        ByteArrayOutputStream sealed = new ByteArrayOutputStream();
        try (OutputStream out = gcm.encrypt(sealed)) {
            out.write(plain);
        }
        return sealed.toByteArray();
    }

    @ParameterizedTest
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void everyReadPatternReturnsThePlaintextWithAndWithoutTheCache(EngineKind kind) throws IOException {
        GcmStreams gcm = GcmStreams.builder().key(KEY).engine(TestEngines.engine(kind)).build();
        for (int size : new int[] {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 5 * CHUNK + 333}) {
            byte[] plain = bytes(size, size);
            byte[] sealed = seal(gcm, plain);
            for (int cache : new int[] {0, 1, 8}) {
                String where = kind + ", " + size + " bytes, cache " + cache;
                CountingInput input = new CountingInput(sealed, 1000);
                try (GcmSeekableChannel ch = gcm.open(input, sealed.length, cache)) {
                    assertEquals(size, ch.size(), where);
                    ByteBuffer all = ByteBuffer.allocate(size + 7);
                    while (ch.read(all) > 0) {
                        all.limit(Math.min(all.capacity(), all.position() + 3 * CHUNK + 5));
                    }
                    assertArrayEquals(plain, Arrays.copyOf(all.array(), all.position()), where + ": sequential");
                    Random random = new Random(size + cache);
                    for (int i = 0; i < 200 && size > 0; i++) {
                        int at = random.nextInt(size);
                        int len = Math.min(size - at, 1 + random.nextInt(2 * CHUNK));
                        byte[] got = new byte[len];
                        ch.readFully(at, got, 0, len);
                        assertArrayEquals(Arrays.copyOfRange(plain, at, at + len), got, where + ": at " + at);
                    }
                    assertEquals(-1, ch.read(ByteBuffer.allocate(1), size), where);
                }
                assertTrue(input.sequential.get() > 0, where + ": the channel's own reads go to readSequentially");
                if (size > 0) {
                    assertTrue(input.positioned.get() > 0, where + ": positioned reads go to read");
                }
            }
        }
        gcm.destroy();
    }

    @Test
    void theCacheOpensEachChunkOnceForNearbyReads() throws IOException {
        GcmStreams gcm = GcmStreams.builder().key(KEY).build();
        byte[] plain = bytes(3, 6 * CHUNK);
        byte[] sealed = seal(gcm, plain);
        for (int cache : new int[] {0, 2, 6}) {
            try (GcmSeekableChannel ch = gcm.open(new CountingInput(sealed, 1 << 20), sealed.length, cache)) {
                byte[] b = new byte[100];
                for (int round = 0; round < 5; round++) {
                    for (int chunk = 0; chunk < 6; chunk++) {
                        ch.readFully(chunk * CHUNK + 50, b, 0, b.length);
                    }
                }
                // LRU: 6 chunks in turn need a cache of 6; with fewer, every read misses.
                assertEquals(cache == 6 ? 6 : 30, ch.chunksOpened(), "cache " + cache);
            }
        }
        gcm.destroy();
    }

    @Test
    void tamperingTruncationAndAWrongKeyFail() throws IOException {
        GcmStreams gcm = GcmStreams.builder().key(KEY).build();
        byte[] plain = bytes(5, 3 * CHUNK + 10);
        byte[] sealed = seal(gcm, plain);

        byte[] tampered = sealed.clone();
        tampered[GcmStreams.HEADER_LENGTH + CHUNK + 16 + 7] ^= 1; // chunk 1
        try (GcmSeekableChannel ch = gcm.open(new CountingInput(tampered, 4096), tampered.length, 8)) {
            byte[] b = new byte[10];
            ch.readFully(5, b, 0, 10);
            assertArrayEquals(Arrays.copyOfRange(plain, 5, 15), b, "chunk 0 is intact");
            StreamAuthenticationException e = assertThrows(StreamAuthenticationException.class,
                    () -> ch.readFully(CHUNK + 5, b, 0, 10));
            assertEquals(1, e.chunk());
            ByteBuffer seq = ByteBuffer.allocate(plain.length);
            StreamAuthenticationException again = assertThrows(StreamAuthenticationException.class, () -> {
                while (ch.read(seq) > 0) {
                    // reads chunk 0, then fails on chunk 1
                }
            });
            assertEquals(1, again.chunk());
        }

        // A length shorter than the message's (a truncated file): the final chunk fails, size() too.
        try (GcmSeekableChannel ch = gcm.open(new CountingInput(sealed, 4096), sealed.length - 5, 8)) {
            assertThrows(StreamAuthenticationException.class, ch::size);
        }
        // A length no message has.
        try (GcmSeekableChannel ch = gcm.open(new CountingInput(sealed, 4096), GcmStreams.HEADER_LENGTH + CHUNK + 16, 8)) {
            assertThrows(StreamAuthenticationException.class, ch::size);
        }
        // Shorter than the header.
        StreamAuthenticationException shortHeader = assertThrows(StreamAuthenticationException.class,
                () -> gcm.open(new CountingInput(sealed, 4096), 20, 8));
        assertTrue(shortHeader.getMessage().contains("20 bytes"), shortHeader.getMessage());

        GcmStreams other = GcmStreams.builder().key(bytes(2, 32)).build();
        assertThrows(StreamAuthenticationException.class, () -> other.open(new CountingInput(sealed, 4096), sealed.length, 8));
        assertFalse(other.matchesHeader(sealed));
        assertTrue(gcm.matchesHeader(sealed));
        assertTrue(gcm.matchesHeader(Arrays.copyOf(sealed, GcmStreams.HEADER_LENGTH)));
        assertThrows(IllegalArgumentException.class, () -> gcm.matchesHeader(new byte[GcmStreams.HEADER_LENGTH - 1]));
        assertThrows(IllegalArgumentException.class, () -> gcm.open(new CountingInput(sealed, 4096), sealed.length, -1));
        assertThrows(IllegalArgumentException.class,
                () -> gcm.open(new CountingInput(sealed, 4096), sealed.length, GcmSeekableChannel.MAX_CACHED_CHUNKS + 1));
        other.destroy();
        gcm.destroy();
    }

    /**
     * A message cut short, or still being written (its stored length no message's): its whole
     * chunks read as in any message, by position and in sequence, each authenticated; reading
     * the end fails as truncated and never returns -1, so it never reads as a shorter message.
     * Cut after two chunks, 7 bytes into the third, and 16 bytes before the third's end (a
     * length some message has: its "final chunk" then fails).
     */
    @ParameterizedTest
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void anUnfinishedMessageReadsItsWholeChunksAndFailsAtTheEnd(EngineKind kind) throws IOException {
        GcmStreams gcm = GcmStreams.builder().key(KEY).engine(TestEngines.engine(kind)).build();
        byte[] plain = bytes(6, 4 * CHUNK + 10);
        byte[] sealed = seal(gcm, plain);
        int wholeChunks = 2;
        for (int cut : new int[] {0, 7, CHUNK}) {
            int length = GcmStreams.HEADER_LENGTH + wholeChunks * (CHUNK + 16) + cut;
            byte[] stored = Arrays.copyOf(sealed, length);
            try (GcmSeekableChannel ch = gcm.open(new CountingInput(stored, 4096), length, 8)) {
                byte[] b = new byte[wholeChunks * CHUNK];
                ch.readFully(0, b, 0, b.length);
                assertArrayEquals(Arrays.copyOf(plain, b.length), b, "cut " + cut);
                assertThrows(StreamAuthenticationException.class, () -> ch.read(wholeChunks * CHUNK, new byte[1], 0, 1));
                assertThrows(StreamAuthenticationException.class, () -> ch.read(ByteBuffer.allocate(1), wholeChunks * CHUNK + 5));
                assertThrows(StreamAuthenticationException.class, ch::size);
                ByteBuffer all = ByteBuffer.allocate(plain.length);
                assertThrows(StreamAuthenticationException.class, () -> {
                    while (ch.read(all) >= 0) {
                        // the whole chunks, then the end fails: never -1
                    }
                });
                assertEquals(wholeChunks * CHUNK, all.position(), "cut " + cut);
                assertArrayEquals(Arrays.copyOf(plain, wholeChunks * CHUNK), Arrays.copyOf(all.array(), all.position()));
            }
        }
        gcm.destroy();
    }

    /** Every plaintext length has one stored length, and the lengths between are no message's. */
    @Test
    void lengthRules() {
        long previous = -1;
        for (long n = 0; n <= 3 * CHUNK + 1; n++) {
            long stored = GcmStreams.ciphertextLength(n);
            assertEquals(n, GcmStreams.plaintextLength(stored), "plaintext " + n);
            for (long between = previous + 1; between < stored; between++) {
                assertEquals(-1, GcmStreams.plaintextLength(between), "stored " + between);
            }
            previous = stored;
        }
        assertEquals(72, GcmStreams.ciphertextLength(0));
        assertEquals(1_049_672, GcmStreams.ciphertextLength(1 << 20));
        assertEquals(-1, GcmStreams.plaintextLength(71));
        assertThrows(IllegalArgumentException.class, () -> GcmStreams.ciphertextLength(-1));
        assertThrows(IllegalArgumentException.class, () -> GcmStreams.ciphertextLength((1L << 38) * CHUNK));
    }
}
