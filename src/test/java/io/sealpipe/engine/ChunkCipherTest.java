package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The chunk calls of {@link AeadCipher} (sealChunks/openChunks) on every engine: the same bytes
 * as one {@code seal} per chunk with nonce = base nonce XOR index, a failed chunk reported by
 * its index with its output zeroed, and the limits checked.
 */
class ChunkCipherTest {
    private static final int CHUNK = AeadCipher.CHUNK_SIZE;
    private static final int SEALED = AeadCipher.SEALED_CHUNK_SIZE;

    private static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static byte[] nonce(byte[] base, long index) {
        byte[] n = base.clone();
        for (int i = 0; i < 8; i++) {
            n[11 - i] ^= (byte) (index >>> (8 * i));
        }
        return n;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void chunkCallsEqualOneSealPerChunkAndReportTheFailedChunk(EngineKind kind) throws Exception {
        Random random = new Random(38);
        byte[] key = bytes(random, 32);
        byte[] base = bytes(random, 12);
        int count = 5;
        long first = 0xfffffeL; // the counter crosses a byte boundary inside the call
        byte[] plain = bytes(random, count * CHUNK + 3);
        try (AeadCipher gcm = TestEngines.engine(kind).newAesGcm(key)) {
            byte[] expected = new byte[count * SEALED];
            for (int i = 0; i < count; i++) {
                gcm.seal(nonce(base, first + i), null, plain, 3 + i * CHUNK, CHUNK, expected, i * SEALED);
            }
            byte[] sealed = new byte[count * SEALED + 5];
            gcm.sealChunks(base, first, plain, 3, count, sealed, 5);
            assertArrayEquals(expected, Arrays.copyOfRange(sealed, 5, sealed.length));

            byte[] opened = new byte[count * CHUNK];
            assertEquals(count, gcm.openChunks(base, first, sealed, 5, count, opened, 0));
            assertArrayEquals(Arrays.copyOfRange(plain, 3, 3 + count * CHUNK), opened);

            ByteBuffer direct = ByteBuffer.allocateDirect(count * SEALED).put(expected).flip();
            ByteBuffer out = ByteBuffer.allocateDirect(count * CHUNK);
            assertEquals(count, gcm.openChunks(base, first, direct, out));
            assertEquals(0, direct.remaining());
            out.flip();
            byte[] fromDirect = new byte[out.remaining()];
            out.get(fromDirect);
            assertArrayEquals(opened, fromDirect);

            // Chunk 3 tampered: chunks 0..2 come out, chunk 3's output is zero, the rest untouched.
            byte[] tampered = expected.clone();
            tampered[3 * SEALED + 100] ^= 1;
            byte[] marked = new byte[count * CHUNK];
            Arrays.fill(marked, (byte) 0x5a);
            assertEquals(3, gcm.openChunks(base, first, tampered, 0, count, marked, 0));
            assertArrayEquals(Arrays.copyOf(opened, 3 * CHUNK), Arrays.copyOf(marked, 3 * CHUNK));
            assertArrayEquals(new byte[CHUNK], Arrays.copyOfRange(marked, 3 * CHUNK, 4 * CHUNK), "failed chunk zeroed");

            // Opened under the wrong index: the first chunk fails.
            assertEquals(0, gcm.openChunks(base, first + 1, expected, 0, count, new byte[count * CHUNK], 0));
            ByteBuffer tamperedBuffer = ByteBuffer.wrap(tampered);
            ByteBuffer heapOut = ByteBuffer.allocate(count * CHUNK);
            assertEquals(3, gcm.openChunks(base, first, tamperedBuffer, heapOut));
            assertEquals(3 * SEALED, tamperedBuffer.position(), "advanced past the authenticated chunks only");
            assertEquals(3 * CHUNK, heapOut.position());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void limitsAndOverlapsAreRejected(EngineKind kind) throws Exception {
        byte[] base = new byte[12];
        try (AeadCipher gcm = TestEngines.engine(kind).newAesGcm(new byte[16])) {
            byte[] in = new byte[2 * SEALED];
            byte[] out = new byte[2 * SEALED];
            long last = (1L << 38) - 1;
            gcm.sealChunks(base, last, in, 0, 1, out, 0); // the last index is allowed
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> gcm.sealChunks(base, last, in, 0, 2, out, 0));
            assertTrue(e.getMessage().contains("2^38"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> gcm.openChunks(base, -1, in, 0, 1, out, 0));
            assertThrows(IllegalArgumentException.class, () -> gcm.sealChunks(base, 0, in, 0, -1, out, 0));
            assertThrows(IllegalArgumentException.class, () -> gcm.sealChunks(new byte[11], 0, in, 0, 1, out, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> gcm.sealChunks(base, 0, in, 0, 3, out, 0));
            assertThrows(IllegalArgumentException.class, () -> gcm.sealChunks(base, 0, in, 0, 1, in, 100),
                    "overlapping input and output");
            assertThrows(IllegalArgumentException.class,
                    () -> gcm.openChunks(base, 0, ByteBuffer.allocate(SEALED + 1), ByteBuffer.allocate(2 * CHUNK)),
                    "not whole sealed chunks");
            assertEquals(0, gcm.openChunks(base, 0, in, 0, 0, out, 0));
        }
    }
}
