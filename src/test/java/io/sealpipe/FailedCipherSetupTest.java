package io.sealpipe;

import static io.sealpipe.CtrFixtures.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sealpipe.ctr.CryptoInputStream;
import io.sealpipe.ctr.CryptoOutputStream;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.ForwardingAeadCipher;
import io.sealpipe.engine.ForwardingEngine;
import io.sealpipe.engine.ForwardingStreamCipher;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.engine.TestEngines;
import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A cipher whose setup fails after the engine made it is closed, not left to a Cleaner with its
 * key schedule inside. Moving a CTR cipher to a position inside a block runs it, which can throw
 * (an engine error, or an OutOfMemoryError as the soak met on the ASan build): for a positioned
 * read's new cipher and its pooled one, and a stream that starts inside a block. And a parallel
 * stream whose second helper cipher cannot be made (an OutOfMemoryError) closes the first: CTR
 * and GCM. Before, each case left one cipher open.
 */
class FailedCipherSetupTest {
    private static final byte[] KEY = CtrFixtures.key(32);
    private static final byte[] IV = bytes(3, 16);
    private static final byte[] PLAIN = bytes(4, 100_000);

    /** A real engine whose CTR and GCM ciphers it counts, and which fails on demand. */
    private static final class FailingEngine extends ForwardingEngine {
        private final AtomicInteger made = new AtomicInteger();
        private final AtomicInteger closed = new AtomicInteger();
        /** Thrown by the next cipher's update, when set. */
        volatile Error failUpdate;
        /** Thrown by the cipher creation after this many more, when at least 0. */
        volatile int failCreateAfter = -1;

        FailingEngine(CryptoEngine real) {
            super(real);
        }

        int open() {
            return made.get() - closed.get();
        }

        @Override
        public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
            failIfDue();
            Runnable closing = made();
            return new ForwardingStreamCipher(real.newAesCtr(key, iv)) {
                @Override
                public int update(byte[] in, int inOffset, int length, byte[] out, int outOffset) {
                    Error e = failUpdate;
                    if (e != null) {
                        failUpdate = null;
                        throw e;
                    }
                    return super.update(in, inOffset, length, out, outOffset);
                }

                @Override
                public void close() {
                    closing.run();
                    super.close();
                }
            };
        }

        @Override
        public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
            failIfDue();
            Runnable closing = made();
            return new ForwardingAeadCipher(real.newAesGcm(key)) {
                @Override
                public void close() {
                    closing.run();
                    super.close();
                }
            };
        }

        private void failIfDue() {
            if (failCreateAfter == 0) {
                throw new OutOfMemoryError("injected: creating a cipher");
            }
            if (failCreateAfter > 0) {
                failCreateAfter--;
            }
        }

        /** Counts a cipher made; returns what its close() runs, which counts its first close. */
        private Runnable made() {
            made.incrementAndGet();
            AtomicBoolean done = new AtomicBoolean();
            return () -> {
                if (done.compareAndSet(false, true)) {
                    closed.incrementAndGet();
                }
            };
        }
    }

    private static CtrStreams ctr(CryptoEngine engine, long streamOffset, int parallelism) {
        return CtrStreams.builder().engine(engine).key(KEY).iv(IV).streamOffset(streamOffset)
                .parallelism(parallelism).build();
    }

    private static byte[] sealed(EngineKind kind) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (OutputStream s = ctr(TestEngines.engine(kind), 0, 1).encrypt(out)) {
            s.write(PLAIN);
        }
        return out.toByteArray();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void aPositionedReadWhoseNewCipherFailsToMoveClosesIt(EngineKind kind) throws IOException {
        FailingEngine engine = new FailingEngine(TestEngines.engine(kind));
        OutOfMemoryError injected = new OutOfMemoryError("injected: moving a new cipher");
        try (CryptoInputStream in = ctr(engine, 0, 1).decrypt(ByteBuffer.wrap(sealed(kind)))) {
            engine.failUpdate = injected;
            assertSame(injected, assertThrows(OutOfMemoryError.class, () -> in.readFully(5, new byte[100])));
        }
        assertEquals(0, engine.open(), "ciphers left open");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void aPositionedReadWhosePooledCipherFailsToMoveClosesIt(EngineKind kind) throws IOException {
        FailingEngine engine = new FailingEngine(TestEngines.engine(kind));
        OutOfMemoryError injected = new OutOfMemoryError("injected: moving a pooled cipher");
        try (CryptoInputStream in = ctr(engine, 0, 1).decrypt(ByteBuffer.wrap(sealed(kind)))) {
            byte[] got = new byte[100];
            in.readFully(16, got); // makes the positioned cipher, which goes back to the pool
            assertArrayEquals(Arrays.copyOfRange(PLAIN, 16, 116), got);
            engine.failUpdate = injected;
            assertSame(injected, assertThrows(OutOfMemoryError.class, () -> in.readFully(5, new byte[100])));
            in.readFully(7, got); // a new cipher serves the next read
            assertArrayEquals(Arrays.copyOfRange(PLAIN, 7, 107), got);
        }
        assertEquals(0, engine.open(), "ciphers left open");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void aStreamStartingInsideABlockWhoseCipherFailsToMoveClosesIt(EngineKind kind) throws IOException {
        byte[] sealed = sealed(kind);
        for (boolean encrypt : new boolean[] {true, false}) {
            FailingEngine engine = new FailingEngine(TestEngines.engine(kind));
            OutOfMemoryError injected = new OutOfMemoryError("injected: moving a stream's cipher");
            engine.failUpdate = injected;
            CtrStreams ctr = ctr(engine, 5, 1);
            assertSame(injected, assertThrows(OutOfMemoryError.class, () -> {
                if (encrypt) {
                    ctr.encrypt(new ByteArrayOutputStream());
                } else {
                    ctr.decrypt(ByteBuffer.wrap(sealed));
                }
            }));
            assertEquals(0, engine.open(), (encrypt ? "encrypt" : "decrypt") + ": ciphers left open");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void aParallelStreamWhoseSecondHelperFailsClosesTheFirst(EngineKind kind) throws IOException {
        FailingEngine engine = new FailingEngine(TestEngines.engine(kind));
        CtrStreams ctr = ctr(engine, 0, 3);
        CryptoOutputStream out = ctr.encrypt(new ByteArrayOutputStream());
        engine.failCreateAfter = 1; // the first helper is made, the second fails
        // a write large enough for the helpers
        OutOfMemoryError failure = assertThrows(OutOfMemoryError.class, () -> out.write(new byte[4 << 20]));
        assertClosesWithNothingBut(failure, out);
        assertEquals(0, engine.open(), "ciphers left open");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void aParallelGcmStreamWhoseSecondHelperFailsClosesTheFirst(EngineKind kind) throws IOException {
        FailingEngine engine = new FailingEngine(TestEngines.engine(kind));
        GcmStreams gcm = GcmStreams.builder().engine(engine).key(KEY).parallelism(3).build();
        GcmOutputStream out = gcm.encrypt(new ByteArrayOutputStream());
        engine.failCreateAfter = 1; // the stream's own cipher was made; the first helper is, the second fails
        OutOfMemoryError failure = assertThrows(OutOfMemoryError.class, () -> out.write(new byte[4 << 20])); // past the first MiB: helpers
        assertClosesWithNothingBut(failure, out);
        assertEquals(0, engine.open(), "ciphers left open");
    }

    /**
     * A close after the stream failed returns, or throws that failure again or as the cause of
     * its own ("the message was not finished"): never another error.
     */
    private static void assertClosesWithNothingBut(Throwable failure, Closeable out) {
        try {
            out.close();
        } catch (Throwable again) {
            if (again != failure && again.getCause() != failure) {
                throw new AssertionError("a close after the failure threw something else than it: " + again, again);
            }
        }
    }
}
