package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two direct buffers that are views of the same memory (duplicates, slices) are one memory to
 * the engines: in place (the same start) works, and a partial overlap is refused before anything
 * is written (a refused open leaves the caller's input as it was) on the OpenSSL engines, which
 * see the addresses. JCE and accp cannot see them; their providers copy what overlaps, so there
 * the result of a partial overlap is right instead.
 */
class AliasedBuffersTest {
    private static final byte[] KEY = new byte[32];
    private static final byte[] IV = new byte[16];
    private static final byte[] NONCE = new byte[AeadCipher.NONCE_LENGTH];

    private static ByteBuffer memory(int size, int seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return ByteBuffer.allocateDirect(size).put(bytes).clear();
    }

    private static byte[] contents(ByteBuffer memory) {
        byte[] copy = new byte[memory.capacity()];
        memory.duplicate().clear().get(copy);
        return copy;
    }

    private static ByteBuffer view(ByteBuffer memory, int from, int length) {
        return memory.duplicate().clear().position(from).limit(from + length);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void ctrRefusesPartlyOverlappingViewsAndWorksInPlace(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        ByteBuffer memory = memory(4096, 1);
        byte[] before = contents(memory);
        if (kind == EngineKind.JCE) {
            byte[] shifted = new byte[1000];
            try (StreamCipher reference = engine.newAesCtr(KEY, IV)) {
                reference.update(before, 0, 1000, shifted, 0);
            }
            try (StreamCipher ctr = engine.newAesCtr(KEY, IV)) {
                ctr.update(view(memory, 0, 1000), view(memory, 100, 1000));
            }
            byte[] got = new byte[1000];
            view(memory, 100, 1000).get(got);
            assertArrayEquals(shifted, got, "jce: the right bytes");
            memory.clear().put(before).clear();
        } else {
            try (StreamCipher ctr = engine.newAesCtr(KEY, IV)) {
                assertThrows(IllegalArgumentException.class,
                        () -> ctr.update(view(memory, 0, 1000), view(memory, 100, 1000)));
                assertArrayEquals(before, contents(memory), "nothing written");
            }
        }
        byte[] expected = new byte[1000];
        try (StreamCipher reference = engine.newAesCtr(KEY, IV)) {
            reference.update(before, 500, 1000, expected, 0);
        }
        try (StreamCipher ctr = engine.newAesCtr(KEY, IV)) {
            ctr.update(view(memory, 500, 1000), view(memory, 500, 1000)); // in place, through two views
        }
        byte[] after = new byte[1000];
        view(memory, 500, 1000).get(after);
        assertArrayEquals(expected, after);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void gcmRefusesPartlyOverlappingViewsAndKeepsTheInput(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        byte[] plain = new byte[2000];
        new Random(2).nextBytes(plain);
        byte[] sealed = new byte[plain.length + AeadCipher.TAG_LENGTH];
        try (AeadCipher gcm = engine.newAesGcm(KEY)) {
            gcm.seal(NONCE, null, plain, 0, plain.length, sealed, 0);
        }
        ByteBuffer memory = ByteBuffer.allocateDirect(8192);
        view(memory, 0, sealed.length).put(sealed);
        byte[] before = contents(memory);
        if (!kind.isOpenSsl()) { // cannot see addresses: the result must be right instead
            byte[] got = new byte[plain.length];
            try (AeadCipher gcm = engine.newAesGcm(KEY)) {
                gcm.open(NONCE, null, view(memory, 0, sealed.length), view(memory, 300, plain.length));
            }
            view(memory, 300, plain.length).get(got);
            assertArrayEquals(plain, got, kind.id() + ": open through overlapping views");
            memory.clear().put(before).clear();
            view(memory, 0, plain.length).put(plain);
            byte[] nonce = NONCE.clone();
            nonce[0] = 1; // a new nonce: GCM providers refuse to seal twice with one
            byte[] expected = new byte[sealed.length];
            try (AeadCipher reference = engine.newAesGcm(KEY); AeadCipher gcm = engine.newAesGcm(KEY)) {
                reference.seal(nonce, null, plain, 0, plain.length, expected, 0);
                gcm.seal(nonce, null, view(memory, 0, plain.length), view(memory, 300, sealed.length));
            }
            byte[] gotSealed = new byte[sealed.length];
            view(memory, 300, sealed.length).get(gotSealed);
            assertArrayEquals(expected, gotSealed, kind.id() + ": seal through overlapping views");
            return;
        }
        try (AeadCipher gcm = engine.newAesGcm(KEY)) {
            assertThrows(IllegalArgumentException.class,
                    () -> gcm.open(NONCE, null, view(memory, 0, sealed.length), view(memory, 300, plain.length)));
            assertThrows(IllegalArgumentException.class,
                    () -> gcm.seal(NONCE, null, view(memory, 0, plain.length), view(memory, 300, sealed.length)));
        }
        assertArrayEquals(before, contents(memory), "a refused call leaves the caller's memory as it was");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void openChunksRefusesAnyOverlapOfViews(EngineKind kind) throws Exception {
        assumeTrue(kind.isOpenSsl(), kind.id() + " cannot see addresses (its result is right instead)");
        CryptoEngine engine = TestEngines.engine(kind);
        int sealedLength = 2 * AeadCipher.SEALED_CHUNK_SIZE;
        ByteBuffer memory = memory(sealedLength + 4096, 3);
        byte[] before = contents(memory);
        try (AeadCipher gcm = engine.newAesGcm(KEY)) {
            assertThrows(IllegalArgumentException.class, () -> gcm.openChunks(NONCE, 0, view(memory, 0, sealedLength),
                    view(memory, 0, 2 * AeadCipher.CHUNK_SIZE)));
            assertThrows(IllegalArgumentException.class, () -> gcm.openChunks(NONCE, 0, view(memory, 0, sealedLength),
                    view(memory, 4000, 2 * AeadCipher.CHUNK_SIZE)));
        }
        assertArrayEquals(before, contents(memory), "nothing written");
    }
}
