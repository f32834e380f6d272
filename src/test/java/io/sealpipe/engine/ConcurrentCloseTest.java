package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.OtherThread;
import io.sealpipe.internal.BaseAeadCipher;
import io.sealpipe.internal.BaseHmac;
import io.sealpipe.internal.BaseStreamCipher;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code close()} racing a call on another thread ends with the call completing or failing with
 * IllegalStateException, never with the engine's context freed under it (a JVM crash on the
 * OpenSSL engines before issue 12). Ciphers are not thread-safe for concurrent data calls, but
 * closing one from another thread must be safe.
 *
 * <p>The engine tests run large calls in a loop on a worker and close from the test thread once
 * the first call has finished, so the close almost always lands inside a native call; which call
 * it lands in does not matter, and no ordering is assumed. The tests on the base classes block a
 * call deterministically with latches and check the order of events exactly.
 */
class ConcurrentCloseTest {
    private static final int SIZE = 4 << 20;
    private static final int ROUNDS = 8;
    private static final byte[] KEY = new byte[32];
    private static final byte[] IV = new byte[16];

    static Stream<EngineKind> kinds() {
        return TestEngines.kinds();
    }

    /** One call of the loop a worker runs until close() stops it. */
    private interface Call {
        void run() throws Exception;
    }

    /**
     * Runs {@code call} in a loop on a worker, closes {@code target} once the first call has
     * returned, and checks that the loop ended with "... is closed".
     */
    private static void closeWhileCalling(String what, AutoCloseable target, Call call) throws Exception {
        CountDownLatch firstCallDone = new CountDownLatch(1);
        OtherThread worker = OtherThread.start("calls on " + what, "the calls on " + what, () -> {
            try {
                while (true) {
                    call.run();
                    firstCallDone.countDown();
                }
            } finally {
                firstCallDone.countDown();
            }
        });
        firstCallDone.await();
        target.close();
        Throwable t = worker.awaitFailure();
        assertInstanceOf(IllegalStateException.class, t, what + ": the loop must end with IllegalStateException");
        assertTrue(t.getMessage().contains("is closed"), what + ": " + t.getMessage());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closingAStreamCipherDuringUpdates(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind, Operation.CTR, Operation.CFB);
        ByteBuffer in = ByteBuffer.allocateDirect(SIZE);
        ByteBuffer out = ByteBuffer.allocateDirect(SIZE);
        for (int round = 0; round < ROUNDS; round++) {
            StreamCipher ctr = engine.newAesCtr(KEY, IV);
            closeWhileCalling(kind + " CTR", ctr, () -> ctr.update(in.clear(), out.clear()));
            StreamCipher cfb = engine.newAesCfb(KEY, IV, false);
            closeWhileCalling(kind + " CFB", cfb, () -> cfb.update(in.clear(), out.clear()));
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closingAnAeadCipherDuringSealsAndOpens(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        int chunks = SIZE / AeadCipher.SEALED_CHUNK_SIZE;
        ByteBuffer plain = ByteBuffer.allocateDirect(chunks * AeadCipher.CHUNK_SIZE);
        ByteBuffer sealed = ByteBuffer.allocateDirect(chunks * AeadCipher.SEALED_CHUNK_SIZE);
        byte[] baseNonce = new byte[12];
        try (AeadCipher gcm = engine.newAesGcm(KEY)) {
            for (int i = 0; i < chunks; i++) {
                plain.limit((i + 1) * AeadCipher.CHUNK_SIZE);
                gcm.seal(nonceOfChunk(baseNonce, i), null, plain, sealed);
            }
        }
        for (int round = 0; round < ROUNDS; round++) {
            AeadCipher sealer = engine.newAesGcm(KEY);
            AtomicInteger nonce = new AtomicInteger(); // JCE refuses to seal twice with one nonce
            ByteBuffer sealOut = ByteBuffer.allocateDirect(plain.capacity() + AeadCipher.TAG_LENGTH);
            closeWhileCalling(kind + " GCM seal", sealer, () -> sealer.seal(
                    nonceOfChunk(new byte[12], nonce.incrementAndGet()), null, plain.clear(), sealOut.clear()));
            AeadCipher opener = engine.newAesGcm(KEY);
            closeWhileCalling(kind + " GCM openChunks", opener, () -> assertEquals(chunks,
                    opener.openChunks(baseNonce, 0, sealed.clear(), plain.clear())));
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closingAnHmacDuringUpdates(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        ByteBuffer in = ByteBuffer.allocateDirect(SIZE);
        for (int round = 0; round < ROUNDS; round++) {
            Hmac mac = engine.newHmacSha256(KEY);
            closeWhileCalling(kind + " HMAC", mac, () -> mac.update(in.clear()));
        }
    }

    private static byte[] nonceOfChunk(byte[] base, long index) {
        byte[] nonce = base.clone();
        for (int i = 0; i < 8; i++) {
            nonce[11 - i] ^= (byte) (index >>> (8 * i));
        }
        return nonce;
    }

    // ---- The base classes, with a call held inside the engine by latches. ----

    /** Holds a call inside the engine until released, and records when the engine is closed. */
    private static final class Gate {
        final CountDownLatch inside = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger engineCloses = new AtomicInteger();
        volatile boolean closedUnderACall;

        void hold() {
            inside.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            if (engineCloses.get() > 0) {
                closedUnderACall = true;
            }
        }

        void engineClose() {
            engineCloses.incrementAndGet();
        }
    }

    /**
     * Holds {@code call} inside the engine, closes from this thread, checks that the engine is
     * not closed yet and that a new call is refused, then lets the held call finish normally and
     * checks that the engine was closed exactly once, after it.
     */
    private static void closeDuringAHeldCall(Gate gate, AutoCloseable target, Call call, Call another)
            throws Exception {
        OtherThread worker = OtherThread.start("held call", "the call that started before close()", call::run);
        gate.inside.await();
        target.close();
        assertEquals(0, gate.engineCloses.get(), "the engine must not be closed while a call is inside it");
        IllegalStateException refused = assertThrows(IllegalStateException.class, another::run);
        assertTrue(refused.getMessage().contains("is closed"), refused.getMessage());
        target.close(); // idempotent, still deferred
        assertEquals(0, gate.engineCloses.get());
        gate.release.countDown();
        worker.join(); // the call that started before close() completes normally
        assertEquals(1, gate.engineCloses.get(), "the last call to leave closes the engine, once");
        assertTrue(!gate.closedUnderACall);
        target.close();
        assertEquals(1, gate.engineCloses.get());
        assertTrue(target.toString().contains("closed"), target.toString());
    }

    @Test
    void streamCipherClosedDuringACallIsReleasedWhenTheCallLeaves() throws Exception {
        Gate gate = new Gate();
        BaseStreamCipher cipher = new BaseStreamCipher("held CTR") {
            @Override
            protected void engineReset(byte[] iv) {}

            @Override
            protected void engineUpdate(Object in, int inOffset, Object out, int outOffset, int length) {
                gate.hold();
            }

            @Override
            protected void engineClose() {
                gate.engineClose();
            }
        };
        byte[] b = new byte[32];
        closeDuringAHeldCall(gate, cipher, () -> cipher.update(b, 0, 16, b, 16), () -> cipher.reset(IV));
    }

    @Test
    void aeadCipherClosedDuringACallIsReleasedWhenTheCallLeaves() throws Exception {
        Gate gate = new Gate();
        BaseAeadCipher cipher = new BaseAeadCipher("held GCM") {
            @Override
            protected int engineSeal(byte[] nonce, byte[] aad, Object in, int inOffset, int length, Object out,
                    int outOffset) {
                gate.hold();
                return length + TAG_LENGTH;
            }

            @Override
            protected int engineOpen(byte[] nonce, byte[] aad, Object in, int inOffset, int length, Object out,
                    int outOffset) {
                return length - TAG_LENGTH;
            }

            @Override
            protected void engineClose() {
                gate.engineClose();
            }
        };
        byte[] b = new byte[64];
        closeDuringAHeldCall(gate, cipher, () -> cipher.seal(new byte[12], null, b, 0, 16, b, 32),
                () -> cipher.open(new byte[12], null, b, 0, 32, b, 32));
    }

    @Test
    void hmacClosedDuringACallIsReleasedWhenTheCallLeaves() throws Exception {
        Gate gate = new Gate();
        BaseHmac mac = new BaseHmac("held HMAC") {
            @Override
            protected void engineUpdate(Object in, int offset, int length) {
                gate.hold();
            }

            @Override
            protected void engineDoFinal(byte[] out, int offset) {}

            @Override
            protected void engineClose() {
                gate.engineClose();
            }
        };
        closeDuringAHeldCall(gate, mac, () -> mac.update(new byte[8], 0, 8), () -> mac.doFinal(new byte[32], 0));
    }
}
