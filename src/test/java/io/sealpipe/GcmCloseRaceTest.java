package io.sealpipe;

import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.ReaderRaces.closeOnAnotherThread;
import static io.sealpipe.ReaderRaces.joinUninterruptibly;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link GcmSeekableChannel#close()} racing positioned reads, and {@link GcmInputStream#close()}
 * racing a read that takes plaintext from the stream's buffer, each race forced to its moment by
 * a hook in the engine, the channel or the stream (no sleeps), on every engine. The wrapped
 * channel stays open ({@code closeUnderlying(false)}), so a read that gets past close() reaches
 * decryption: it must fail as closed, never report tampering. A stream's read must return the
 * plaintext or fail as closed, never the zeros close() leaves in the buffer.
 */
@Timeout(60) // a safety net against a deadlocked fix only: no test waits for time
class GcmCloseRaceTest {
    private static final byte[] KEY = bytes(32, 32);
    private static final byte[] PLAIN = bytes(5, 3 * 16384 + 100);
    /** Past the first MiB, which a stream reads alone, and two batches of 1 MiB that workers open with it. */
    private static final byte[] LONG_PLAIN = bytes(6, (int) GcmInputStream.PARALLEL_AFTER + 2 * (1 << 20) + 100);

    private static GcmStreams gcm(CryptoEngine engine) {
        return gcm(engine, 1);
    }

    private static GcmStreams gcm(CryptoEngine engine, int parallelism) {
        return GcmStreams.builder().key(KEY).engine(engine).closeUnderlying(false).parallelism(parallelism).build();
    }

    private static byte[] sealed(EngineKind kind) throws IOException {
        return sealed(kind, PLAIN);
    }

    private static byte[] sealed(EngineKind kind, byte[] plain) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = gcm(TestEngines.engine(kind)).encrypt(sink)) {
            out.write(plain);
        }
        return sink.toByteArray();
    }

    /**
     * close() runs while a positioned read makes its reader, after the message key was handed to
     * the engine: the read fails as closed. Before, the engine read the key after close() zeroed
     * it, and the read reported the chunk as tampered (StreamAuthenticationException).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeWhileAPositionedReadMakesItsReaderFailsTheReadAsClosed(EngineKind kind) throws IOException {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        GcmSeekableChannel channel = gcm(engine).open(new MemorySeekableChannel(sealed(kind), 1 << 20));
        engine.beforeNextCipher(Thread.currentThread(), () -> closeOnAnotherThread(channel));
        assertThrows(ClosedChannelException.class, () -> channel.read(20_000, new byte[100], 0, 100));
        assertThrows(ClosedChannelException.class, () -> channel.read(ByteBuffer.allocate(100), 20_000),
                "and so does the next one");
        assertEquals(0, engine.open(), "ciphers left open");
    }

    /** The same while a read works out the authenticated size (size() makes a reader too). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeWhileSizeMakesItsReaderFailsAsClosed(EngineKind kind) throws IOException {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        GcmSeekableChannel channel = gcm(engine).open(new MemorySeekableChannel(sealed(kind), 1 << 20));
        engine.beforeNextCipher(Thread.currentThread(), () -> closeOnAnotherThread(channel));
        assertThrows(ClosedChannelException.class, channel::size);
        assertEquals(0, engine.open(), "ciphers left open");
    }

    /**
     * close() runs while a positioned read waits in the wrapped channel, with a reader it already
     * has: that read completes with the right bytes (its reader was sound), is closed when given
     * back, and the next read fails as closed.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeDuringAPositionedChannelReadLeavesNoReaderOpen(EngineKind kind) throws IOException {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        MemorySeekableChannel wrapped = new MemorySeekableChannel(sealed(kind));
        GcmSeekableChannel channel = gcm(engine).open(wrapped);
        wrapped.beforeNextRead(Thread.currentThread(), () -> closeOnAnotherThread(channel));
        byte[] b = new byte[100];
        channel.readFully(20_000, b, 0, b.length);
        assertArrayEquals(Arrays.copyOfRange(PLAIN, 20_000, 20_100), b);
        assertThrows(ClosedChannelException.class, () -> channel.read(0, b, 0, 1));
        assertEquals(0, engine.open(), "ciphers left open");
    }

    /** The reads that take their plaintext from a stream's buffer (shorter than a chunk). */
    private enum ShortRead {
        ARRAY, DIRECT_BUFFER, SINGLE_BYTE;

        /** One read of up to 100 bytes; the bytes it returned. */
        byte[] read(GcmInputStream in) throws IOException {
            switch (this) {
                case ARRAY -> {
                    byte[] b = new byte[100];
                    return Arrays.copyOf(b, Math.max(0, in.read(b, 0, b.length)));
                }
                case DIRECT_BUFFER -> {
                    ByteBuffer b = ByteBuffer.allocateDirect(100);
                    in.read(b);
                    byte[] got = new byte[b.flip().remaining()];
                    b.get(got);
                    return got;
                }
                default -> {
                    int c = in.read();
                    return c < 0 ? new byte[0] : new byte[] {(byte) c};
                }
            }
        }
    }

    /**
     * close() runs, whole, once the engine has opened a short read's chunk into the stream's
     * plaintext buffer and before the read copies from it (the hook is the end of the engine
     * call, on the reading thread): the read fails as closed. Before, it copied the zeros that
     * close() had left in the buffer and returned them as plaintext.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeWhileAShortReadOpensItsChunkFailsTheReadAsClosed(EngineKind kind) throws IOException {
        byte[] sealed = sealed(kind);
        for (boolean inMemory : new boolean[] {false, true}) {
            for (ShortRead read : ShortRead.values()) {
                String where = read + (inMemory ? ", message in memory" : ", message from a stream");
                HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
                GcmStreams gcm = gcm(engine);
                GcmInputStream in = inMemory ? gcm.decrypt(ByteBuffer.wrap(sealed)) : gcm.decrypt(new ByteArrayInputStream(sealed));
                Thread reader = Thread.currentThread();
                AtomicBoolean closed = new AtomicBoolean();
                engine.onOpenedChunks((first, count) -> {
                    if (Thread.currentThread() == reader && closed.compareAndSet(false, true)) {
                        closeOnAnotherThread(in);
                    }
                });
                byte[] got;
                try {
                    got = read.read(in);
                } catch (ClosedChannelException e) {
                    got = null;
                }
                assertTrue(closed.get(), where + ": close() ran inside the read");
                if (got != null) {
                    fail(where + ": the read returned " + got.length + " bytes after close() (" + zeros(got)
                            + " of them zero) instead of failing as closed");
                }
                assertThrows(ClosedChannelException.class, () -> in.read(new byte[10], 0, 10), where + ": the next read");
                assertEquals(0, engine.open(), where + ": ciphers left open");
            }
        }
    }

    static Stream<Arguments> kindsAndParallelism() {
        return TestEngines.kinds().flatMap(kind -> Stream.of(Arguments.of(kind, 1), Arguments.of(kind, 2)));
    }

    /**
     * close() runs on another thread while a short read is stopped between its check that the
     * stream is open and its copy of buffered plaintext (a hook in the stream), at parallelism 1
     * (a chunk buffered) and 2 (a batch of 64 chunks opened with workers, the next one opened
     * ahead): the hook lets the read go on once close() has ended or waits for it. The read
     * returns the plaintext (close() waits for the copy) and the next read fails as closed.
     * Before, close() zeroed the buffer under the read, which returned the zeros as plaintext.
     */
    @ParameterizedTest(name = "{0}, parallelism {1}")
    @MethodSource("kindsAndParallelism")
    void closeBetweenAShortReadsCheckAndItsCopyNeverHandsBackZeros(EngineKind kind, int parallelism)
            throws IOException {
        byte[] plain = parallelism == 1 ? PLAIN : LONG_PLAIN;
        byte[] sealed = sealed(kind, plain);
        for (ShortRead read : ShortRead.values()) {
            String where = read + ", parallelism " + parallelism;
            HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
            GcmInputStream in = gcm(engine, parallelism).decrypt(new ByteArrayInputStream(sealed));
            int pos = parallelism == 1 ? 0 : (int) GcmInputStream.PARALLEL_AFTER; // read alone before the batches
            assertEquals(pos, in.readNBytes(new byte[pos], 0, pos));
            byte[] first = new byte[100];
            assertEquals(100, in.read(first, 0, 100)); // buffers a chunk (parallelism 1) or a batch (2)
            assertArrayEquals(Arrays.copyOfRange(plain, pos, pos + 100), first, where);
            pos += 100;
            AtomicReference<Thread> closer = new AtomicReference<>();
            AtomicReference<Throwable> closeFailure = new AtomicReference<>();
            in.beforePlainCopy = () -> {
                in.beforePlainCopy = null;
                Thread t = new Thread(() -> {
                    try {
                        in.close();
                    } catch (Throwable e) {
                        closeFailure.set(e);
                    }
                }, "closer");
                closer.set(t);
                t.start();
                while (t.isAlive() && !in.closeWaits(t)) { // close() ended, or waits for this read
                    Thread.onSpinWait();
                }
            };
            byte[] got;
            try {
                got = read.read(in);
            } catch (ClosedChannelException e) {
                got = null; // also right: failed as closed
            }
            assertTrue(closer.get() != null, where + ": the hook ran");
            joinUninterruptibly(closer.get());
            assertNull(closeFailure.get(), where + ": close() failed");
            if (got != null) {
                assertTrue(got.length > 0, where + ": a read returned no byte and no end");
                assertArrayEquals(Arrays.copyOfRange(plain, pos, pos + got.length), got,
                        where + ": a read racing close() returned " + zeros(got) + " zeros of " + got.length + " bytes");
            }
            assertThrows(ClosedChannelException.class, () -> in.read(new byte[10], 0, 10), where + ": the next read");
            assertEquals(0, engine.open(), where + ": ciphers left open");
        }
    }

    private static int zeros(byte[] b) {
        int n = 0;
        for (byte x : b) {
            n += x == 0 ? 1 : 0;
        }
        return n;
    }
}
