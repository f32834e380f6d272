package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import javax.crypto.AEADBadTagException;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Wrong keys, closed objects and bad offsets fail with an exception that names the value. */
class MisuseTest {

    static java.util.stream.Stream<EngineKind> kinds() {
        return TestEngines.kinds();
    }

    private static void assertMessage(Class<? extends Throwable> type, String fragment, Executable call) {
        Throwable t = assertThrows(type, call);
        assertTrue(t.getMessage() != null && t.getMessage().contains(fragment),
                "message should contain '" + fragment + "': " + t.getMessage());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void wrongKeyLengthsAreNamed(EngineKind kind) {
        CryptoEngine engine = TestEngines.engine(kind);
        byte[] iv = new byte[16];
        if (kind.supports(Operation.CTR)) {
            assertMessage(InvalidKeyException.class, "not 20", () -> engine.newAesCtr(new byte[20], iv));
            assertMessage(InvalidKeyException.class, "not 0", () -> engine.newAesCfb(new byte[0], iv, true));
        } else { // accp: what it lacks is named, whatever the arguments
            assertMessage(NoSuchAlgorithmException.class, kind.id() + " has no ctr", () -> engine.newAesCtr(new byte[16], iv));
            assertMessage(NoSuchAlgorithmException.class, kind.id() + " has no cfb", () -> engine.newAesCfb(new byte[16], iv, true));
        }
        assertMessage(InvalidKeyException.class, "not 33", () -> engine.newAesGcm(new byte[33]));
        assertMessage(InvalidKeyException.class, "empty", () -> engine.newHmacSha256(new byte[0]));
        assertMessage(NullPointerException.class, "key", () -> engine.newAesGcm(null));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void wrongIvAndNonceLengthsAreNamed(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        byte[] key = new byte[16];
        if (kind.supports(Operation.CTR)) {
            assertMessage(IllegalArgumentException.class, "iv must be 16 bytes, not 12",
                    () -> engine.newAesCtr(key, new byte[12]));
            try (StreamCipher ctr = engine.newAesCtr(key, new byte[16])) {
                assertMessage(IllegalArgumentException.class, "not 17", () -> ctr.reset(new byte[17]));
            }
        }
        try (AeadCipher gcm = engine.newAesGcm(key)) {
            byte[] buf = new byte[64];
            assertMessage(IllegalArgumentException.class, "nonce must be 12 bytes, not 16",
                    () -> gcm.seal(new byte[16], null, buf, 0, 8, buf, 32));
            assertMessage(AEADBadTagException.class, "shorter than the 16-byte tag",
                    () -> gcm.open(new byte[12], null, buf, 0, 15, buf, 32));
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void badOffsetsAreNamed(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        byte[] in = new byte[10];
        byte[] out = new byte[10];
        if (kind.supports(Operation.CTR)) {
            try (StreamCipher ctr = engine.newAesCtr(new byte[32], new byte[16])) {
                assertMessage(IndexOutOfBoundsException.class, "offset -1", () -> ctr.update(in, -1, 5, out, 0));
                assertMessage(IndexOutOfBoundsException.class, "offset 6 and length 5",
                        () -> ctr.update(in, 0, 5, out, 6));
                assertMessage(IndexOutOfBoundsException.class, "length -3", () -> ctr.update(in, 0, -3, out, 0));
                assertMessage(IllegalArgumentException.class, "overlap", () -> ctr.update(in, 0, 8, in, 2));
                assertMessage(IllegalArgumentException.class, "room for 4 bytes but input has 10",
                        () -> ctr.update(ByteBuffer.wrap(in), ByteBuffer.allocateDirect(4)));
                assertMessage(NullPointerException.class, "input is null", () -> ctr.update(null, 0, 1, out, 0));
            }
        }
        try (AeadCipher gcm = engine.newAesGcm(new byte[32]); Hmac mac = engine.newHmacSha256(new byte[32])) {
            assertMessage(IndexOutOfBoundsException.class, "offset 0 and length 26",
                    () -> gcm.seal(new byte[12], null, in, 0, 10, new byte[25], 0));
            assertMessage(IndexOutOfBoundsException.class, "offset 1 and length 32",
                    () -> mac.doFinal(new byte[32], 1));
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closedObjectsRefuseWorkAndCloseTwiceIsFine(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        AeadCipher gcm = engine.newAesGcm(new byte[16]);
        Hmac mac = engine.newHmacSha256(new byte[16]);
        gcm.close();
        mac.close();
        gcm.close();
        mac.close();
        byte[] b = new byte[64];
        assertMessage(IllegalStateException.class, "closed", () -> gcm.seal(new byte[12], null, b, 0, 1, b, 32));
        assertMessage(IllegalStateException.class, "closed", () -> mac.update(b, 0, 1));
        assertTrue(gcm.toString().contains(kind.id()) && gcm.toString().contains("closed"), gcm.toString());
        if (kind.supports(Operation.CTR)) {
            StreamCipher ctr = engine.newAesCtr(new byte[16], new byte[16]);
            ctr.close();
            ctr.close();
            assertMessage(IllegalStateException.class, "closed", () -> ctr.update(b, 0, 1, b, 1));
            assertMessage(IllegalStateException.class, "closed", () -> ctr.reset(new byte[16]));
            assertTrue(ctr.toString().contains(kind.id()) && ctr.toString().contains("closed"), ctr.toString());
        }
    }

    /** Opening the same message twice (re-reading a chunk) works, large or small, heap or direct. */
    @ParameterizedTest
    @MethodSource("kinds")
    void openingTheSameMessageAgainWorks(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        java.util.Random random = new java.util.Random(7);
        for (int size : new int[] {100, 16384, 16385, 200_000}) {
            byte[] plain = new byte[size];
            random.nextBytes(plain);
            byte[] nonce = new byte[12];
            random.nextBytes(nonce);
            try (AeadCipher gcm = engine.newAesGcm(new byte[32])) {
                byte[] sealed = new byte[size + 16];
                gcm.seal(nonce, new byte[] {1, 2}, plain, 0, size, sealed, 0);
                for (int i = 0; i < 3; i++) {
                    ByteBuffer out = i == 1 ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
                    gcm.open(nonce, new byte[] {1, 2}, ByteBuffer.wrap(sealed), out);
                    byte[] got = new byte[size];
                    out.flip().get(got);
                    assertArrayEquals(plain, got, kind + " size " + size + " open #" + i);
                }
                sealed[size / 2] ^= 4; // a flipped ciphertext bit, then a wrong AAD
                byte[] out = new byte[size];
                assertThrows(AEADBadTagException.class, () -> gcm.open(nonce, new byte[] {1, 2}, sealed, 0, size + 16, out, 0));
                assertArrayEquals(new byte[size], out, "no plaintext after a failed open");
                sealed[size / 2] ^= 4;
                assertThrows(AEADBadTagException.class, () -> gcm.open(nonce, new byte[] {1, 3}, sealed, 0, size + 16, out, 0));
                assertArrayEquals(new byte[size], out, "no plaintext after a failed open");
                // In place.
                byte[] copy = sealed.clone();
                gcm.open(nonce, new byte[] {1, 2}, copy, 0, size + 16, copy, 0);
                assertArrayEquals(plain, java.util.Arrays.copyOf(copy, size));
            }
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void readOnlyHeapInputIsAccepted(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind, Operation.CTR);
        byte[] plain = new byte[40_000];
        new java.util.Random(1).nextBytes(plain);
        try (StreamCipher a = engine.newAesCtr(new byte[16], new byte[16]);
                StreamCipher b = engine.newAesCtr(new byte[16], new byte[16])) {
            byte[] expected = new byte[plain.length];
            a.update(plain, 0, plain.length, expected, 0);
            ByteBuffer out = ByteBuffer.allocate(plain.length);
            b.update(ByteBuffer.wrap(plain).asReadOnlyBuffer(), out);
            assertArrayEquals(expected, out.array());
        }
    }
}
