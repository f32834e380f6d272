package io.sealpipe.engine;

import static io.sealpipe.engine.TestEngines.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import javax.crypto.AEADBadTagException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every engine gives the same bytes as every other for random sizes 0..3 MiB, offsets, heap
 * and direct buffers and 1-byte calls (seeded, so failures reproduce). JCE is the reference:
 * it shares no code with the two OpenSSL engines.
 */
class CrossEngineTest {
    private static final int[] SIZES = {0, 1, 15, 16, 17, 255, 4095, 16384, 16385, 65537, 1 << 20, 3 << 20};

    /** The engines that have every one of the operations (all of them for none). */
    private static List<CryptoEngine> engines(Operation... needed) {
        List<CryptoEngine> engines = new ArrayList<>();
        for (EngineKind kind : EngineKind.values()) {
            if (!java.util.Arrays.stream(needed).allMatch(kind::supports)) {
                continue;
            }
            EngineStatus status = Engines.report().status(kind);
            if (status.available() || TestEngines.required(kind)) {
                engines.add(TestEngines.engine(kind));
            }
        }
        return engines;
    }

    static java.util.stream.Stream<EngineKind> kinds() {
        return TestEngines.kinds();
    }

    @Test
    void ctrAndCfbAgreeOnAllSizesAndBufferKinds() throws Exception {
        Random random = new Random(20261122);
        for (int size : withRandomSizes(random)) {
            byte[] key = bytes(random, new int[] {16, 24, 32}[random.nextInt(3)]);
            byte[] iv = bytes(random, 16);
            byte[] plain = bytes(random, size);
            byte[] expectedCtr = null;
            byte[] expectedCfb = null;
            for (CryptoEngine engine : engines(Operation.CTR, Operation.CFB)) {
                String where = engine.kind() + ", size " + size + ", key " + key.length;
                try (StreamCipher ctr = engine.newAesCtr(key, iv);
                        StreamCipher cfb = engine.newAesCfb(key, iv, true);
                        StreamCipher cfbDecrypt = engine.newAesCfb(key, iv, false)) {
                    byte[] ctrOut = transform(ctr, plain, random);
                    byte[] cfbOut = transform(cfb, plain, random);
                    if (expectedCtr == null) {
                        expectedCtr = ctrOut;
                        expectedCfb = cfbOut;
                    }
                    assertArrayEquals(expectedCtr, ctrOut, "CTR " + where);
                    assertArrayEquals(expectedCfb, cfbOut, "CFB " + where);
                    assertArrayEquals(plain, transform(cfbDecrypt, cfbOut, random), "CFB decrypt " + where);
                }
            }
        }
    }

    @Test
    void gcmAndHmacAgreeOnAllSizesAndBufferKinds() throws Exception {
        Random random = new Random(4231);
        for (int size : withRandomSizes(random)) {
            byte[] key = bytes(random, new int[] {16, 24, 32}[random.nextInt(3)]);
            byte[] nonce = bytes(random, 12);
            byte[] aad = random.nextBoolean() ? null : bytes(random, random.nextInt(100));
            byte[] plain = bytes(random, size);
            byte[] expectedSealed = null;
            byte[] expectedMac = null;
            for (CryptoEngine engine : engines()) {
                String where = engine.kind() + ", size " + size;
                try (AeadCipher gcm = engine.newAesGcm(key); Hmac hmac = engine.newHmacSha256(key)) {
                    boolean directIn = random.nextBoolean();
                    boolean directOut = random.nextBoolean();
                    ByteBuffer in = buffer(plain, directIn, random.nextInt(8));
                    ByteBuffer sealedBuffer = allocate(size + 16, directOut, random.nextInt(8));
                    int n = gcm.seal(nonce, aad, in, sealedBuffer);
                    assertEquals(size + 16, n, where);
                    byte[] sealed = remainingOfFlipped(sealedBuffer, n);
                    if (expectedSealed == null) {
                        expectedSealed = sealed;
                    }
                    assertArrayEquals(expectedSealed, sealed, "GCM seal " + where);

                    byte[] opened = new byte[size + 3];
                    assertEquals(size, gcm.open(nonce, aad, sealed, 0, sealed.length, opened, 3), where);
                    assertArrayEquals(plain, Arrays.copyOfRange(opened, 3, 3 + size), "GCM open " + where);

                    if (size > 0) {
                        byte[] tampered = sealed.clone();
                        tampered[random.nextInt(tampered.length)] ^= 1 << random.nextInt(8);
                        byte[] out = new byte[size];
                        assertThrows(AEADBadTagException.class,
                                () -> gcm.open(nonce, aad, tampered, 0, tampered.length, out, 0), where);
                        assertArrayEquals(new byte[size], out, "nothing released after a bad tag, " + where);
                    }

                    byte[] mac = new byte[32];
                    hmac.update(buffer(plain, directIn, 5));
                    hmac.doFinal(mac, 0);
                    if (expectedMac == null) {
                        expectedMac = mac;
                    }
                    assertArrayEquals(expectedMac, mac, "HMAC " + where);
                }
            }
        }
    }

    /** One call over every heap/direct pairing, with sizes beyond the JCE engine's 16 KiB slices. */
    @ParameterizedTest
    @MethodSource("kinds")
    void largeSingleBufferCallsMatchTheArrayCallOnEveryBufferPairing(EngineKind kind) throws Exception {
        Random random = new Random(16385);
        byte[] key = bytes(random, 32);
        byte[] iv = bytes(random, 16);
        CryptoEngine engine = TestEngines.engine(kind, Operation.CTR);
        List<String> failures = new ArrayList<>();
        for (int size : new int[] {16383, 16385, 40000, 1 << 20}) {
            byte[] plain = bytes(random, size);
            byte[] expected = new byte[size];
            try (StreamCipher reference = engine.newAesCtr(key, iv)) {
                reference.update(plain, 0, size, expected, 0);
            }
            for (boolean directIn : new boolean[] {false, true}) {
                for (boolean directOut : new boolean[] {false, true}) {
                    try (StreamCipher ctr = engine.newAesCtr(key, iv)) {
                        ByteBuffer dst = allocate(size, directOut, 3);
                        assertEquals(size, ctr.update(buffer(plain, directIn, 5), dst));
                        byte[] got = remainingOfFlipped(dst, size);
                        if (!Arrays.equals(expected, got)) {
                            failures.add("size " + size + (directIn ? " direct" : " heap") + " in,"
                                    + (directOut ? " direct" : " heap") + " out");
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), failures);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void nistCfb128Vector(EngineKind kind) throws Exception {
        byte[] plain = hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
                + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710");
        byte[] expected = hex("3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b"
                + "26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6"); // SP 800-38A F.3.13
        byte[] key = hex("2b7e151628aed2a6abf7158809cf4f3c");
        byte[] iv = hex("000102030405060708090a0b0c0d0e0f");
        CryptoEngine engine = TestEngines.engine(kind, Operation.CFB);
        try (StreamCipher enc = engine.newAesCfb(key, iv, true); StreamCipher dec = engine.newAesCfb(key, iv, false)) {
            byte[] out = new byte[plain.length];
            for (int i = 0; i < plain.length; i += 7) {
                int n = Math.min(7, plain.length - i);
                enc.update(plain, i, n, out, i);
            }
            assertArrayEquals(expected, out);
            byte[] back = new byte[plain.length];
            dec.update(out, 0, out.length, back, 0);
            assertArrayEquals(plain, back);
        }
    }

    private static int[] withRandomSizes(Random random) {
        int[] sizes = Arrays.copyOf(SIZES, SIZES.length + 4);
        for (int i = SIZES.length; i < sizes.length; i++) {
            sizes[i] = random.nextInt(3 << 20);
        }
        return sizes;
    }

    /**
     * Transforms through a randomly chosen call pattern: one call, 1-byte calls (small inputs),
     * random splits with offsets, or direct buffers.
     */
    private static byte[] transform(StreamCipher c, byte[] in, Random random) {
        int pattern = random.nextInt(4);
        if (pattern == 1 && in.length > 5000) {
            pattern = 2;
        }
        byte[] out = new byte[in.length];
        switch (pattern) {
            case 0 -> c.update(in, 0, in.length, out, 0);
            case 1 -> {
                for (int i = 0; i < in.length; i++) {
                    c.update(in, i, 1, out, i);
                }
            }
            case 2 -> {
                byte[] shiftedIn = new byte[in.length + 13];
                System.arraycopy(in, 0, shiftedIn, 13, in.length);
                byte[] shiftedOut = new byte[in.length + 7];
                for (int done = 0; done < in.length; ) {
                    int n = Math.min(in.length - done, 1 + random.nextInt(70000));
                    c.update(shiftedIn, 13 + done, n, shiftedOut, 7 + done);
                    done += n;
                }
                System.arraycopy(shiftedOut, 7, out, 0, in.length);
            }
            default -> {
                ByteBuffer src = buffer(in, random.nextBoolean(), random.nextInt(16));
                ByteBuffer dst = allocate(in.length, random.nextBoolean(), random.nextInt(16));
                while (src.hasRemaining()) {
                    ByteBuffer part = src.duplicate();
                    part.limit(Math.min(src.limit(), src.position() + 1 + random.nextInt(300000)));
                    int n = c.update(part, dst);
                    src.position(src.position() + n);
                }
                return remainingOfFlipped(dst, in.length);
            }
        }
        return out;
    }

    private static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** A buffer whose position is at offset and whose remaining bytes are data. */
    private static ByteBuffer buffer(byte[] data, boolean direct, int offset) {
        ByteBuffer b = allocate(data.length, direct, offset);
        b.put(data);
        b.position(offset);
        return b;
    }

    private static ByteBuffer allocate(int size, boolean direct, int offset) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(size + offset) : ByteBuffer.allocate(size + offset);
        b.position(offset);
        return b;
    }

    /** The n bytes just written before position. */
    private static byte[] remainingOfFlipped(ByteBuffer b, int n) {
        byte[] out = new byte[n];
        b.position(b.position() - n);
        b.get(out);
        return out;
    }
}
