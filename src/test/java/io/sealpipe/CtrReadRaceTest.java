package io.sealpipe;

import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.CtrFixtures.key;
import static io.sealpipe.CtrFixtures.referenceCtr;
import static io.sealpipe.ReaderRaces.awaitFinishedOrBlocked;
import static io.sealpipe.ReaderRaces.closeOnAnotherThread;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link CryptoInputStream} readers racing each other and close(), each race forced to its bad
 * moment by a hook in the channel or the engine (no sleeps), on every engine. The channel is a
 * {@link PrivateLockChannel}: it locks privately, as most channels do, so the stream's own
 * locking is all that keeps a positioned read's seek away from a sequential read.
 */
@Timeout(60) // a safety net against a deadlocked fix only: no test waits for time
class CtrReadRaceTest {
    private static final int SIZE = 100_000;
    private static final byte[] KEY = key(32);
    private static final byte[] IV = CtrFixtures.ivs().get("random");
    private static final byte[] PLAIN = bytes(3, SIZE);
    private static final byte[] CIPHERTEXT = referenceCtr(KEY, IV, 0, PLAIN);

    private static CtrStreams ctr(io.sealpipe.engine.CryptoEngine engine) {
        return CtrStreams.builder().engine(engine).key(KEY).iv(IV).closeUnderlying(false).build();
    }

    /**
     * A positioned read has moved the channel to its position and is reading there when a
     * sequential read starts: the sequential read must wait or read at its own position, never
     * take the positioned read's bytes and decrypt them as byte 0 onwards.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void sequentialReadDuringAPositionedReadGetsItsOwnBytes(EngineKind kind) throws Exception {
        PrivateLockChannel channel = new PrivateLockChannel(CIPHERTEXT);
        try (CryptoInputStream in = ctr(TestEngines.engine(kind)).decrypt(channel)) {
            warmUp(in);
            CountDownLatch positionedReadAtItsPosition = new CountDownLatch(1);
            AtomicReference<byte[]> sequential = new AtomicReference<>();
            AtomicReference<byte[]> positioned = new AtomicReference<>();
            AtomicReference<Throwable> sequentialFailure = new AtomicReference<>();
            AtomicReference<Throwable> positionedFailure = new AtomicReference<>();
            Thread sequentialReader = new Thread(() -> {
                try {
                    positionedReadAtItsPosition.await();
                    byte[] b = new byte[100];
                    int n = in.read(b, 0, b.length);
                    sequential.set(Arrays.copyOf(b, n));
                } catch (Throwable t) {
                    sequentialFailure.set(t);
                }
            }, "sequential");
            Thread positionedReader = new Thread(() -> {
                try {
                    byte[] b = new byte[100];
                    in.readFully(70_000, b);
                    positioned.set(b);
                } catch (Throwable t) {
                    positionedFailure.set(t);
                }
            }, "positioned");
            // The positioned read's channel read, after its seek: let the sequential read run
            // until it is done (the bug) or waits for the lock (the fix).
            channel.beforeNextRead(positionedReader, () -> {
                positionedReadAtItsPosition.countDown();
                awaitFinishedOrBlocked(sequentialReader);
            });
            sequentialReader.start();
            positionedReader.start();
            sequentialReader.join();
            positionedReader.join();
            if (sequentialFailure.get() != null) {
                throw new AssertionError("the sequential read failed", sequentialFailure.get());
            }
            byte[] got = sequential.get();
            assertTrue(got.length > 0);
            assertArrayEquals(Arrays.copyOf(PLAIN, got.length), got, "sequential read from byte 0");
            if (positionedFailure.get() != null) {
                throw new AssertionError("the positioned read failed", positionedFailure.get());
            }
            assertArrayEquals(Arrays.copyOfRange(PLAIN, 70_000, 70_100), positioned.get(), "positioned read at 70000");
            assertEquals(got.length, in.getPos());
        }
    }

    /**
     * Loads the classes both reads use, and leaves the stream at 0 with nothing buffered, so the
     * next sequential read goes to the channel.
     */
    private static void warmUp(CryptoInputStream in) throws IOException {
        in.readFully(50_000, new byte[10]);
        in.seek(40_000);
        in.read(new byte[10]);
        in.seek(0);
    }

    /**
     * close() runs while a positioned read is in its channel read, after its checks: the read
     * fails as closed (before, it made a cipher from the destroyed key and failed with
     * IllegalStateException), and no cipher is left open.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeDuringAPositionedChannelReadFailsTheReadAsClosed(EngineKind kind) {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        PrivateLockChannel channel = new PrivateLockChannel(CIPHERTEXT);
        CryptoInputStream in = ctr(engine).decrypt(channel);
        channel.beforeNextRead(Thread.currentThread(), () -> closeOnAnotherThread(in));
        assertThrows(ClosedChannelException.class, () -> in.readFully(1000, new byte[100]));
        assertEquals(0, engine.open(), "ciphers left open");
    }

    /**
     * close() runs while a positioned read makes its cipher, after the key was handed to the
     * engine: the read fails as closed. Before, the engine read the key after close() zeroed it
     * and the read returned wrong plaintext without an error (CTR cannot notice).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeWhileAPositionedReadMakesItsCipherFailsTheReadAsClosed(EngineKind kind) {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        CryptoInputStream in = ctr(engine).decrypt(new PrivateLockChannel(CIPHERTEXT));
        engine.beforeNextCipher(Thread.currentThread(), () -> closeOnAnotherThread(in));
        byte[] b = new byte[100];
        assertThrows(ClosedChannelException.class, () -> in.readFully(1000, b),
                () -> "returned " + (Arrays.equals(b, Arrays.copyOfRange(PLAIN, 1000, 1100)) ? "the right" : "wrong")
                        + " plaintext after close()");
        assertEquals(0, engine.open(), "ciphers left open");
    }
}
