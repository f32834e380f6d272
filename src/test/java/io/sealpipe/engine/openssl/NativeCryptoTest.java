package io.sealpipe.engine.openssl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The C side validates every argument itself, even those the Java wrappers already check:
 * these calls bypass the wrappers and go straight to the bridge.
 */
class NativeCryptoTest {
    private static final int CHUNK = NativeCrypto.CHUNK_SIZE;
    private static final int SEALED = CHUNK + NativeCrypto.GCM_TAG_LENGTH;
    private static final byte[] NONCE = new byte[12];

    private long ctr;
    private long gcm;
    private long hmac;

    @BeforeEach
    void open() throws Exception {
        TestEngines.engine(EngineKind.OPENSSL_JNI); // loads, or skips outside CI
        ctr = NativeCrypto.cipherNew(NativeCrypto.AES_CTR, new byte[16], new byte[16], true);
        gcm = NativeCrypto.cipherNew(NativeCrypto.AES_GCM, new byte[32], null, true);
        hmac = NativeCrypto.hmacNew(new byte[8]);
    }

    @AfterEach
    void free() {
        NativeCrypto.cipherFree(ctr);
        NativeCrypto.cipherFree(gcm);
        NativeCrypto.hmacFree(hmac);
    }

    private static void assertMessage(Class<? extends Throwable> type, String fragment, Executable call) {
        Throwable t = assertThrows(type, call);
        assertTrue(t.getMessage().contains(fragment), "expected '" + fragment + "' in: " + t.getMessage());
    }

    @Test
    void handlesAreChecked() {
        assertMessage(IllegalStateException.class, "handle is null",
                () -> NativeCrypto.cipherUpdate(0, new byte[1], 0, new byte[1], 0, 1));
        assertMessage(IllegalStateException.class, "handle is null", () -> NativeCrypto.hmacFinal(0, new byte[32], 0));
        assertMessage(IllegalArgumentException.class, "another mode",
                () -> NativeCrypto.gcmSeal(ctr, new byte[12], null, new byte[1], 0, 1, new byte[17], 0));
        assertMessage(IllegalArgumentException.class, "gcmSeal/gcmOpen",
                () -> NativeCrypto.cipherUpdate(gcm, new byte[1], 0, new byte[1], 0, 1));
    }

    @Test
    void smallCallsCheckTheirArguments() {
        int max = NativeCrypto.SMALL_CALL;
        assertMessage(IllegalStateException.class, "handle is null",
                () -> NativeCrypto.cipherUpdateSmall(0, new byte[1], 0, new byte[1], 0, 1));
        assertMessage(IllegalArgumentException.class, "not a cipher handle",
                () -> NativeCrypto.cipherUpdateSmall(hmac, new byte[1], 0, new byte[1], 0, 1));
        assertMessage(IllegalArgumentException.class, "gcmSeal/gcmOpen",
                () -> NativeCrypto.cipherUpdateSmall(gcm, new byte[1], 0, new byte[1], 0, 1));
        assertMessage(NullPointerException.class, "input is null",
                () -> NativeCrypto.cipherUpdateSmall(ctr, null, 0, new byte[1], 0, 1));
        assertMessage(NullPointerException.class, "output is null",
                () -> NativeCrypto.cipherUpdateSmall(ctr, new byte[1], 0, null, 0, 1));
        assertMessage(IllegalArgumentException.class, "small calls take 0 to " + max,
                () -> NativeCrypto.cipherUpdateSmall(ctr, new byte[max + 1], 0, new byte[max + 1], 0, max + 1));
        assertMessage(IllegalArgumentException.class, "length -1",
                () -> NativeCrypto.cipherUpdateSmall(ctr, new byte[4], 0, new byte[4], 0, -1));
        assertMessage(IndexOutOfBoundsException.class, "input: offset -1",
                () -> NativeCrypto.cipherUpdateSmall(ctr, new byte[4], -1, new byte[4], 0, 1));
        assertMessage(IndexOutOfBoundsException.class, "input: offset 3 and length 2",
                () -> NativeCrypto.cipherUpdateSmall(ctr, new byte[4], 3, new byte[4], 0, 2));
        assertMessage(IndexOutOfBoundsException.class, "output: offset 2147483647",
                () -> NativeCrypto.cipherUpdateSmall(ctr, new byte[4], 0, new byte[4], Integer.MAX_VALUE, 1));
        assertEquals(0, NativeCrypto.cipherUpdateSmall(ctr, new byte[0], 0, new byte[0], 0, 0));
    }

    @Test
    void smallCallsGiveTheBytesOfPinnedCallsAndKeepTheCounterOnARefusal() throws Exception {
        long pinned = NativeCrypto.cipherNew(NativeCrypto.AES_CTR, new byte[16], new byte[16], true);
        try {
            byte[] plain = new byte[3 * NativeCrypto.SMALL_CALL];
            Arrays.fill(plain, (byte) 7);
            byte[] expected = new byte[plain.length];
            byte[] actual = new byte[plain.length];
            assertThrows(IndexOutOfBoundsException.class,
                    () -> NativeCrypto.cipherUpdateSmall(ctr, plain, 0, new byte[4], 0, 16));
            int at = 0;
            for (int len : new int[] {1, 15, 16, 17, 255, 256, NativeCrypto.SMALL_CALL, 0, 3}) {
                NativeCrypto.cipherUpdate(pinned, plain, at, expected, at, len);
                NativeCrypto.cipherUpdateSmall(ctr, plain, at, actual, at, len);
                at += len;
            }
            assertArrayEquals(expected, actual);
            byte[] inPlace = Arrays.copyOf(plain, 100);
            NativeCrypto.cipherUpdateSmall(ctr, inPlace, 0, inPlace, 0, 100);
            NativeCrypto.cipherUpdate(pinned, plain, 0, expected, 0, 100);
            assertArrayEquals(Arrays.copyOf(expected, 100), inPlace);
        } finally {
            NativeCrypto.cipherFree(pinned);
        }
    }

    @Test
    void keysIvsAndModesAreChecked() {
        assertMessage(InvalidKeyException.class, "not 17",
                () -> NativeCrypto.cipherNew(NativeCrypto.AES_CTR, new byte[17], new byte[16], true));
        assertMessage(InvalidAlgorithmParameterException.class, "iv must be 16 bytes, not 8",
                () -> NativeCrypto.cipherNew(NativeCrypto.AES_CTR, new byte[16], new byte[8], true));
        assertMessage(IllegalArgumentException.class, "unknown cipher mode",
                () -> NativeCrypto.cipherNew(99, new byte[16], new byte[16], true));
        assertMessage(NullPointerException.class, "key is null",
                () -> NativeCrypto.cipherNew(NativeCrypto.AES_GCM, null, null, true));
        assertMessage(InvalidAlgorithmParameterException.class, "nonce must be 12 bytes, not 11",
                () -> NativeCrypto.gcmSeal(gcm, new byte[11], null, new byte[1], 0, 1, new byte[17], 0));
        assertMessage(InvalidKeyException.class, "empty", () -> NativeCrypto.hmacNew(new byte[0]));
    }

    @Test
    void chunkCallsAreChecked() {
        int chunk = NativeCrypto.CHUNK_SIZE;
        int sealed = chunk + NativeCrypto.GCM_TAG_LENGTH;
        byte[] in = new byte[2 * sealed];
        byte[] out = new byte[2 * sealed];
        byte[] base = new byte[12];
        assertMessage(IllegalArgumentException.class, "another mode",
                () -> NativeCrypto.gcmSealChunks(ctr, base, 0, in, 0, 1, out, 0));
        assertMessage(IllegalStateException.class, "handle is null",
                () -> NativeCrypto.gcmOpenChunks(0, base, 0, in, 0, 1, out, 0));
        assertMessage(NullPointerException.class, "base nonce is null",
                () -> NativeCrypto.gcmSealChunks(gcm, null, 0, in, 0, 1, out, 0));
        assertMessage(InvalidAlgorithmParameterException.class, "base nonce must be 12 bytes",
                () -> NativeCrypto.gcmSealChunks(gcm, new byte[16], 0, in, 0, 1, out, 0));
        assertMessage(IllegalArgumentException.class, "chunk count must be",
                () -> NativeCrypto.gcmSealChunks(gcm, base, 0, in, 0, -1, out, 0));
        assertMessage(IllegalArgumentException.class, "outside 0..2^38-1",
                () -> NativeCrypto.gcmSealChunks(gcm, base, (1L << 38) - 1, in, 0, 2, out, 0));
        assertMessage(IllegalArgumentException.class, "outside 0..2^38-1",
                () -> NativeCrypto.gcmOpenChunks(gcm, base, -1, in, 0, 1, out, 0));
        assertMessage(IndexOutOfBoundsException.class, "input: offset 0 and length 49152 out of bounds for size 32800",
                () -> NativeCrypto.gcmSealChunks(gcm, base, 0, in, 0, 3, out, 0));
        assertMessage(IllegalArgumentException.class, "overlap",
                () -> NativeCrypto.gcmSealChunks(gcm, base, 0, in, 0, 1, in, 100));
        assertMessage(IllegalArgumentException.class, "must be a byte[] or a direct ByteBuffer",
                () -> NativeCrypto.gcmOpenChunks(gcm, base, 0, ByteBuffer.allocate(sealed), 0, 1, out, 0));
    }

    @Test
    void buffersAreChecked() {
        byte[] b = new byte[32];
        assertMessage(IndexOutOfBoundsException.class, "offset 30 and length 5 out of bounds for size 32",
                () -> NativeCrypto.cipherUpdate(ctr, b, 30, new byte[64], 0, 5));
        assertMessage(IndexOutOfBoundsException.class, "output: offset -1",
                () -> NativeCrypto.cipherUpdate(ctr, b, 0, b, -1, 5));
        assertMessage(IndexOutOfBoundsException.class, "length -5",
                () -> NativeCrypto.hmacUpdate(hmac, b, 0, -5));
        assertMessage(IllegalArgumentException.class, "must be a byte[] or a direct ByteBuffer",
                () -> NativeCrypto.cipherUpdate(ctr, ByteBuffer.allocate(8), 0, b, 0, 8));
        assertMessage(IllegalArgumentException.class, "must be a byte[] or a direct ByteBuffer",
                () -> NativeCrypto.cipherUpdate(ctr, "text", 0, b, 0, 1));
        assertMessage(NullPointerException.class, "output is null",
                () -> NativeCrypto.cipherUpdate(ctr, b, 0, null, 0, 1));
        assertMessage(IndexOutOfBoundsException.class, "size 16",
                () -> NativeCrypto.gcmSeal(gcm, new byte[12], null, ByteBuffer.allocateDirect(16), 0, 16,
                        ByteBuffer.allocateDirect(16), 0));
        assertMessage(IndexOutOfBoundsException.class, "output",
                () -> NativeCrypto.hmacFinal(hmac, new byte[31], 0));
    }

    @Test
    void javaAndCAgreeOnConstants() {
        NativeCrypto.checkConstants(NativeCrypto.constants());
        int[] wrong = NativeCrypto.constants();
        wrong[1]++;
        assertMessage(LinkageError.class, "constant 1", () -> NativeCrypto.checkConstants(wrong));
    }

    // Hostile arguments added by issue 12: extreme lengths (signed overflow in C before), read-only
    // direct outputs (written through, or a crash on a read-only mapping), direct buffers that are
    // two views of one memory (passed the overlap check, which compared objects), and failed opens,
    // whose output must be zeroed.

    private static byte[] filled(int size) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) 0x55);
        return b;
    }

    @Test
    void extremeLengthsAreRejectedBeforeAnyArithmetic() {
        byte[] in = new byte[64];
        byte[] out = new byte[64];
        assertMessage(IndexOutOfBoundsException.class, "input: offset 0 and length -2147483648",
                () -> NativeCrypto.gcmOpen(gcm, NONCE, null, in, 0, Integer.MIN_VALUE, out, 0));
        assertMessage(IndexOutOfBoundsException.class, "input: offset 0 and length -2147483648",
                () -> NativeCrypto.gcmSeal(gcm, NONCE, null, in, 0, Integer.MIN_VALUE, out, 0));
        assertMessage(IndexOutOfBoundsException.class, "input: offset 0 and length 2147483647",
                () -> NativeCrypto.gcmSeal(gcm, NONCE, null, in, 0, Integer.MAX_VALUE, out, 0));
        assertMessage(IndexOutOfBoundsException.class, "input: offset 0 and length 2147483647",
                () -> NativeCrypto.gcmOpen(gcm, NONCE, null, in, 0, Integer.MAX_VALUE, out, 0));
        assertMessage(IndexOutOfBoundsException.class, "input: offset 2147483647",
                () -> NativeCrypto.gcmSeal(gcm, NONCE, null, in, Integer.MAX_VALUE, 16, out, 0));
        assertMessage(IndexOutOfBoundsException.class, "output: offset 2147483647",
                () -> NativeCrypto.cipherUpdate(ctr, in, 0, out, Integer.MAX_VALUE, 1));
        assertMessage(IndexOutOfBoundsException.class, "length -2147483648",
                () -> NativeCrypto.hmacUpdate(hmac, in, 0, Integer.MIN_VALUE));
        assertMessage(IllegalArgumentException.class,
                "first chunk 9223372036854775807 with chunk count 1 is outside 0..2^38-1",
                () -> NativeCrypto.gcmSealChunks(gcm, NONCE, Long.MAX_VALUE, in, 0, 1, out, 0));
        assertMessage(IllegalArgumentException.class, "first chunk -9223372036854775808 with chunk count 1 is outside",
                () -> NativeCrypto.gcmOpenChunks(gcm, NONCE, Long.MIN_VALUE, in, 0, 1, out, 0));
        assertMessage(IllegalArgumentException.class, "chunk count must be 0..",
                () -> NativeCrypto.gcmOpenChunks(gcm, NONCE, 0, in, 0, Integer.MAX_VALUE, out, 0));
    }

    @Test
    void readOnlyDirectOutputsAreRejectedAndNotWritten() throws Exception {
        ByteBuffer backing = ByteBuffer.allocateDirect(2 * SEALED);
        ByteBuffer readOnly = backing.asReadOnlyBuffer();
        byte[] in = new byte[2 * SEALED];
        assertMessage(IllegalArgumentException.class, "output is a read-only buffer",
                () -> NativeCrypto.cipherUpdate(ctr, in, 0, readOnly, 0, 64));
        assertMessage(IllegalArgumentException.class, "output is a read-only buffer",
                () -> NativeCrypto.gcmSeal(gcm, NONCE, null, in, 0, 64, readOnly, 0));
        assertMessage(IllegalArgumentException.class, "output is a read-only buffer",
                () -> NativeCrypto.gcmSealChunks(gcm, NONCE, 0, in, 0, 1, readOnly, 0));
        assertMessage(IllegalArgumentException.class, "output is a read-only buffer",
                () -> NativeCrypto.gcmOpenChunks(gcm, NONCE, 0, in, 0, 1, readOnly, 0));
        byte[] sealed = new byte[80];
        NativeCrypto.gcmSeal(gcm, NONCE, null, new byte[64], 0, 64, sealed, 0);
        assertMessage(IllegalArgumentException.class, "output is a read-only buffer",
                () -> NativeCrypto.gcmOpen(gcm, NONCE, null, sealed, 0, 80, readOnly, 0));
        assertArrayEquals(new byte[2 * SEALED], bytes(backing), "nothing written through the read-only view");
        // A read-only input is fine.
        assertEquals(64, NativeCrypto.cipherUpdate(ctr, readOnly, 0, new byte[64], 0, 64));
    }

    /** Writing into a read-only file mapping faults: before the check this crashed the JVM. */
    @Test
    void aReadOnlyMappingIsRejected(@TempDir Path dir) throws Exception {
        Path file = Files.write(dir.resolve("mapped"), filled(4096));
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, 4096);
            assertMessage(IllegalArgumentException.class, "output is a read-only buffer",
                    () -> NativeCrypto.cipherUpdate(ctr, new byte[64], 0, mapped, 0, 64));
        }
        assertArrayEquals(filled(4096), Files.readAllBytes(file));
    }

    @Test
    void directViewsOfTheSameMemoryAreComparedByAddress() throws Exception {
        ByteBuffer memory = ByteBuffer.allocateDirect(3 * SEALED);
        ByteBuffer view = memory.duplicate();
        ByteBuffer shifted = memory.slice(100, 2 * SEALED);
        // Chunks: any overlap, also through another object over the same memory.
        assertMessage(IllegalArgumentException.class, "input and output overlap",
                () -> NativeCrypto.gcmSealChunks(gcm, NONCE, 0, memory, 0, 1, view, 100));
        assertMessage(IllegalArgumentException.class, "input and output overlap",
                () -> NativeCrypto.gcmSealChunks(gcm, NONCE, 0, memory, 100, 1, shifted, 0));
        assertMessage(IllegalArgumentException.class, "input and output overlap",
                () -> NativeCrypto.gcmOpenChunks(gcm, NONCE, 0, shifted, 0, 1, memory, SEALED - 1));
        // Single calls: in place is fine, a partial overlap is not, whether one object or two.
        assertMessage(IllegalArgumentException.class, "input and output overlap",
                () -> NativeCrypto.cipherUpdate(ctr, memory, 0, view, 3, 64));
        assertMessage(IllegalArgumentException.class, "input and output overlap",
                () -> NativeCrypto.cipherUpdate(ctr, memory, 100, shifted, 1, 64));
        assertMessage(IllegalArgumentException.class, "input and output overlap",
                () -> NativeCrypto.gcmSeal(gcm, NONCE, null, memory, 0, 64, view, 32));
        assertMessage(IllegalArgumentException.class, "input and output overlap",
                () -> NativeCrypto.gcmOpen(gcm, NONCE, null, memory, 32, 80, view, 0));
        assertEquals(64, NativeCrypto.cipherUpdate(ctr, memory, 100, shifted, 0, 64)); // in place
        assertEquals(80, NativeCrypto.gcmSeal(gcm, NONCE, null, memory, 0, 64, view, 0));
        assertEquals(64, NativeCrypto.gcmOpen(gcm, NONCE, null, view, 0, 80, memory, 0));
        // Disjoint ranges of one memory are fine.
        assertEquals(1, NativeCrypto.gcmSealChunks(gcm, NONCE, 0, memory, 0, 1, view, CHUNK));
        assertEquals(1, NativeCrypto.gcmOpenChunks(gcm, NONCE, 0, view, CHUNK, 1, memory, 2 * SEALED));
    }

    /** The address a direct buffer's index 0 has, read from the object; anything else is refused. */
    @Test
    void directBufferAddressesAreReadAndTheirArgumentChecked() {
        ByteBuffer memory = ByteBuffer.allocateDirect(4096);
        long base = NativeCrypto.directBufferAddress(memory);
        assertTrue(base > 0, "address " + base);
        assertEquals(base, NativeCrypto.directBufferAddress(memory.duplicate().position(7)));
        assertEquals(base + 100, NativeCrypto.directBufferAddress(memory.slice(100, 50)));
        assertEquals(base, NativeCrypto.directBufferAddress(memory.asReadOnlyBuffer()));
        assertMessage(NullPointerException.class, "buffer is null", () -> NativeCrypto.directBufferAddress(null));
        assertMessage(IllegalArgumentException.class, "buffer must be a direct ByteBuffer",
                () -> NativeCrypto.directBufferAddress(ByteBuffer.allocate(16)));
        assertMessage(IllegalArgumentException.class, "buffer must be a direct ByteBuffer",
                () -> NativeCrypto.directBufferAddress(ByteBuffer.allocate(16).asReadOnlyBuffer()));
    }

    @Test
    void handlesOfTheOtherKindAreRejected() {
        assertMessage(IllegalArgumentException.class, "not a cipher handle",
                () -> NativeCrypto.cipherUpdate(hmac, new byte[1], 0, new byte[1], 0, 1));
        assertMessage(IllegalArgumentException.class, "not an HMAC handle",
                () -> NativeCrypto.hmacUpdate(ctr, new byte[1], 0, 1));
        assertMessage(IllegalStateException.class, "cipher handle is null", () -> NativeCrypto.cipherFree(0));
        assertMessage(IllegalStateException.class, "HMAC handle is null", () -> NativeCrypto.hmacFree(0));
    }

    /** A failed open leaves its output range zeroed, and nothing outside it touched. */
    @Test
    void failedOpensLeaveTheOutputZeroed() throws Exception {
        int size = 1000;
        byte[] plain = filled(size);
        byte[] sealed = new byte[size + 16];
        NativeCrypto.gcmSeal(gcm, NONCE, new byte[] {1}, plain, 0, size, sealed, 0);
        sealed[size + 3] ^= 1; // a bad tag
        byte[] out = filled(size + 20);
        assertThrows(AEADBadTagException.class,
                () -> NativeCrypto.gcmOpen(gcm, NONCE, new byte[] {1}, sealed, 0, size + 16, out, 10));
        assertZeroedOnly(out, 10, size);
        ByteBuffer direct = ByteBuffer.allocateDirect(size + 20).put(filled(size + 20));
        assertThrows(AEADBadTagException.class,
                () -> NativeCrypto.gcmOpen(gcm, NONCE, new byte[] {1}, sealed, 0, size + 16, direct, 10));
        assertZeroedOnly(bytes(direct), 10, size);
        sealed[size + 3] ^= 1;
        assertThrows(AEADBadTagException.class, // a wrong AAD: the data decrypts, the tag fails
                () -> NativeCrypto.gcmOpen(gcm, NONCE, new byte[] {2}, sealed, 0, size + 16, out, 10));
        assertZeroedOnly(out, 10, size);

        byte[] chunks = new byte[2 * SEALED];
        byte[] plainChunks = new byte[2 * CHUNK];
        Arrays.fill(plainChunks, (byte) 0x33);
        NativeCrypto.gcmSealChunks(gcm, NONCE, 0, plainChunks, 0, 2, chunks, 0);
        chunks[SEALED + 5] ^= 1; // the second chunk fails
        byte[] opened = filled(2 * CHUNK + 20);
        assertEquals(1, NativeCrypto.gcmOpenChunks(gcm, NONCE, 0, chunks, 0, 2, opened, 10));
        assertArrayEquals(Arrays.copyOf(plainChunks, CHUNK), Arrays.copyOfRange(opened, 10, 10 + CHUNK),
                "chunk 0 authenticated");
        Arrays.fill(opened, 10, 10 + CHUNK, (byte) 0x55);
        assertZeroedOnly(opened, 10 + CHUNK, CHUNK);
    }

    private static void assertZeroedOnly(byte[] out, int offset, int length) {
        for (int i = 0; i < out.length; i++) {
            byte expected = i >= offset && i < offset + length ? 0 : (byte) 0x55;
            assertEquals(expected, out[i], "byte " + i);
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] copy = new byte[b.capacity()];
        b.duplicate().clear().get(copy);
        return copy;
    }
}
