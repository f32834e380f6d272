package io.sealpipe.engine.openssl;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.nio.ByteBuffer;
import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The C side validates every argument itself, even those the Java wrappers already check:
 * these calls bypass the wrappers and go straight to the bridge.
 */
class NativeCryptoTest {
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
}
