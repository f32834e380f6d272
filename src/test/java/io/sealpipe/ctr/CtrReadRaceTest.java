package io.sealpipe.ctr;

import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.CtrFixtures.key;
import static io.sealpipe.CtrFixtures.referenceCtr;
import static io.sealpipe.ReaderRaces.closeOnAnotherThread;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.CtrFixtures;
import io.sealpipe.HookedEngine;
import io.sealpipe.MemorySeekableChannel;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link CryptoInputStream} readers racing each other and close(), each race forced to its bad
 * moment by a hook in the channel or the engine (no sleeps), on every engine. The channel is a
 * {@link MemorySeekableChannel}: it locks privately, as most channels do, so the stream's own
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
     * A positioned read has moved the channel to its position and is about to read there when a
     * sequential read comes in: the sequential read must read at its own position, never take
     * the positioned read's bytes and decrypt them as byte 0 onwards. The sequential read runs
     * in the channel's hook, on the positioned read's own thread, so the moment is exact with no
     * second thread (the stream's lock is reentrant; across threads it makes the sequential read
     * wait for the positioned one, which cannot go wrong in more ways than this).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void sequentialReadDuringAPositionedReadGetsItsOwnBytes(EngineKind kind) throws Exception {
        MemorySeekableChannel channel = new MemorySeekableChannel(CIPHERTEXT);
        try (CryptoInputStream in = ctr(TestEngines.engine(kind)).decrypt(channel)) {
            warmUp(in);
            byte[] sequential = new byte[100];
            int[] got = new int[1];
            channel.beforeNextRead(Thread.currentThread(), () -> {
                try {
                    got[0] = in.read(sequential, 0, sequential.length);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            byte[] positioned = new byte[100];
            in.readFully(70_000, positioned);
            assertTrue(got[0] > 0, "the sequential read ran");
            assertArrayEquals(Arrays.copyOf(PLAIN, got[0]), Arrays.copyOf(sequential, got[0]), "sequential read from byte 0");
            assertArrayEquals(Arrays.copyOfRange(PLAIN, 70_000, 70_100), positioned, "positioned read at 70000");
            assertEquals(got[0], in.getPos());
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
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void closeDuringAPositionedChannelReadFailsTheReadAsClosed(EngineKind kind) {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        MemorySeekableChannel channel = new MemorySeekableChannel(CIPHERTEXT);
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
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void closeWhileAPositionedReadMakesItsCipherFailsTheReadAsClosed(EngineKind kind) {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        CryptoInputStream in = ctr(engine).decrypt(new MemorySeekableChannel(CIPHERTEXT));
        engine.beforeNextCipher(Thread.currentThread(), () -> closeOnAnotherThread(in));
        byte[] b = new byte[100];
        assertThrows(ClosedChannelException.class, () -> in.readFully(1000, b),
                () -> "returned " + (Arrays.equals(b, Arrays.copyOfRange(PLAIN, 1000, 1100)) ? "the right" : "wrong")
                        + " plaintext after close()");
        assertEquals(0, engine.open(), "ciphers left open");
    }
}
