package io.sealpipe.gcm;

import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.ReaderRaces.closeOnAnotherThread;
import static io.sealpipe.ReaderRaces.startClose;
import static io.sealpipe.gcm.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.SALT_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.HookedEngine;
import io.sealpipe.KeyLifetimeTest;
import io.sealpipe.MemorySeekableChannel;
import io.sealpipe.ReaderRaces;
import io.sealpipe.ReaderRaces.Closing;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link GcmSeekableChannel#close()} racing positioned reads, and {@link GcmInputStream#close()}
 * racing a read that takes plaintext from the stream's buffer, a read about to call the engine
 * and the first read's check of the header, each race forced to its moment by
 * a hook in the engine, the channel or the stream (no sleeps), on every engine. The wrapped
 * channel stays open ({@code closeUnderlying(false)}), so a read that gets past close() reaches
 * decryption: it must fail as closed, never report tampering. A stream's read must return the
 * plaintext or fail as closed, never the zeros close() leaves in the buffer.
 */
@Timeout(60) // a safety net against a deadlocked fix only: no test waits for time
class GcmCloseRaceTest {
    private static final byte[] KEY = bytes(32, 32);
    private static final byte[] PLAIN = bytes(5, 3 * 16384 + 100);
    /**
     * Past the first MiB, which a stream reads alone, and 2 MiB more: at least two batches that
     * workers open with it.
     */
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
     * close() comes in once the engine has opened a short read's chunk into the stream's
     * plaintext buffer and before the read copies from it (the hook is the end of the engine
     * call, on the reading thread; close() waits for that call to return, then runs whole before
     * the copy or waits for it): the read fails as closed. Before, it copied the zeros that
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
                GcmInputStream in = inMemory ? gcm.decrypt(ByteBuffer.wrap(sealed))
                        : gcm.decrypt(new ByteArrayInputStream(sealed));
                Thread reader = Thread.currentThread();
                AtomicReference<Closing> closing = new AtomicReference<>();
                engine.onOpenedChunks((first, count) -> {
                    if (Thread.currentThread() == reader && closing.get() == null) {
                        closing.set(startClose(in, in::closeWaits)); // close() waits for the engine call to return
                    }
                });
                byte[] got;
                try {
                    got = read.read(in);
                } catch (ClosedChannelException e) {
                    got = null;
                }
                assertTrue(closing.get() != null, where + ": close() ran inside the read");
                closing.get().join();
                if (got != null) {
                    fail(where + ": the read returned " + got.length + " bytes after close() (" + zeros(got)
                            + " of them zero) instead of failing as closed");
                }
                assertThrows(ClosedChannelException.class, () -> in.read(new byte[10], 0, 10),
                        where + ": the next read");
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
     * (a chunk buffered) and 2 (a batch of chunks opened with workers, the next one opened
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
            AtomicReference<Closing> closing = new AtomicReference<>();
            in.beforePlainCopy = () -> {
                in.beforePlainCopy = null;
                closing.set(startClose(in, in::closeWaits)); // close() ended, or waits for this read
            };
            byte[] got;
            try {
                got = read.read(in);
            } catch (ClosedChannelException e) {
                got = null; // also right: failed as closed
            }
            assertTrue(closing.get() != null, where + ": the hook ran");
            closing.get().join();
            if (got != null) {
                assertTrue(got.length > 0, where + ": a read returned no byte and no end");
                assertArrayEquals(Arrays.copyOfRange(plain, pos, pos + got.length), got,
                        where + ": a read racing close() returned " + zeros(got) + " zeros of " + got.length
                                + " bytes");
            }
            assertThrows(ClosedChannelException.class, () -> in.read(new byte[10], 0, 10), where + ": the next read");
            assertEquals(0, engine.open(), where + ": ciphers left open");
        }
    }

    /**
     * Every kind of read: those from the stream's buffer, and one of 1 MiB (a batch or more)
     * straight into the caller's array.
     */
    private enum Read {
        SHORT_ARRAY, LARGE_ARRAY, DIRECT_BUFFER, SINGLE_BYTE;

        /** One read; the bytes it returned. */
        byte[] read(GcmInputStream in) throws IOException {
            return switch (this) {
                case SHORT_ARRAY -> ShortRead.ARRAY.read(in);
                case LARGE_ARRAY -> {
                    byte[] b = new byte[GcmParallelWriter.BATCH_CHUNKS * CHUNK_SIZE];
                    yield Arrays.copyOf(b, Math.max(0, in.read(b, 0, b.length)));
                }
                case DIRECT_BUFFER -> ShortRead.DIRECT_BUFFER.read(in);
                case SINGLE_BYTE -> ShortRead.SINGLE_BYTE.read(in);
            };
        }
    }

    /** Which engine call of the reading thread close() comes just before. */
    private enum EngineCall {
        /** openChunks of the first chunks (before the first MiB, so without workers at parallelism 2 too). */
        FIRST_CHUNKS,
        /** open of the final chunk (at parallelism 2 after the batches opened with workers). */
        FINAL_CHUNK
    }

    /**
     * close() runs on another thread just before a read calls the engine on the reading thread
     * (a hook at the start of the engine call): for the first chunks and for the final chunk, at
     * parallelism 1 and 2, for every kind of read, over a stream and in memory. The read returns
     * the right plaintext (close() waits for the engine call) or fails as closed, and no cipher
     * is left open. Before, close() closed the cipher under the read, which threw the engine's
     * IllegalStateException ("AES-256-GCM (jce) is closed").
     */
    @ParameterizedTest(name = "{0}, parallelism {1}")
    @MethodSource("kindsAndParallelism")
    void closeJustBeforeAReadCallsTheEngineFailsTheReadAsClosed(EngineKind kind, int parallelism) throws IOException {
        byte[] plain = parallelism == 1 ? PLAIN : LONG_PLAIN;
        byte[] sealed = sealed(kind, plain);
        for (EngineCall call : EngineCall.values()) {
            for (boolean inMemory : new boolean[] {false, true}) {
                for (Read read : Read.values()) {
                    String where = call + ", " + read + (inMemory ? ", message in memory" : ", message from a stream");
                    HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
                    GcmStreams gcm = gcm(engine, parallelism);
                    GcmInputStream in = inMemory ? gcm.decrypt(ByteBuffer.wrap(sealed))
                            : gcm.decrypt(new ByteArrayInputStream(sealed));
                    int pos = call == EngineCall.FIRST_CHUNKS ? 0 : plain.length / CHUNK_SIZE * CHUNK_SIZE;
                    assertEquals(pos, in.readNBytes(new byte[pos], 0, pos), where);
                    Thread reader = Thread.currentThread();
                    AtomicReference<Closing> closing = new AtomicReference<>();
                    Runnable hook = () -> {
                        if (Thread.currentThread() == reader && closing.get() == null) {
                            closing.set(startClose(in, in::closeWaits)); // close() ended, or waits for this read
                        }
                    };
                    if (call == EngineCall.FIRST_CHUNKS) {
                        engine.onOpenChunks((first, count) -> hook.run());
                    } else {
                        engine.onOpen(hook);
                    }
                    byte[] got = readOrClosed(where, () -> read.read(in));
                    assertTrue(closing.get() != null, where + ": close() ran inside the read");
                    closing.get().join();
                    if (got != null) {
                        assertTrue(got.length > 0, where + ": a read returned no byte and no end");
                        assertArrayEquals(Arrays.copyOfRange(plain, pos, pos + got.length), got, where);
                    }
                    assertThrows(ClosedChannelException.class, () -> in.read(new byte[10], 0, 10),
                            where + ": the next read");
                    assertEquals(0, engine.open(), where + ": ciphers left open");
                }
            }
        }
    }

    /**
     * close() runs on another thread while the first read checks the header, inside the engine's
     * creation of the stream's cipher (the key commitment matched), at parallelism 1 and 2, over a
     * stream and in memory: the read fails as closed, no cipher is left open, and nothing of ours
     * still holds the message key. Before, close() found no cipher yet: the one made after it was
     * never closed (a native context left to the Cleaner), and at parallelism 2 the copy of the
     * message key kept for the workers' ciphers was never zeroed.
     */
    @ParameterizedTest(name = "{0}, parallelism {1}")
    @MethodSource("kindsAndParallelism")
    void closeWhileTheFirstReadMakesTheCipherLeavesNothingOpen(EngineKind kind, int parallelism) throws IOException {
        byte[] sealed = sealed(kind);
        byte[] messageKey = messageKey(sealed);
        for (boolean inMemory : new boolean[] {false, true}) {
            String where = inMemory ? "message in memory" : "message from a stream";
            HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
            GcmStreams gcm = gcm(engine, parallelism);
            GcmInputStream in = inMemory ? gcm.decrypt(ByteBuffer.wrap(sealed))
                    : gcm.decrypt(new ByteArrayInputStream(sealed));
            AtomicReference<Closing> closing = new AtomicReference<>();
            engine.beforeNextCipher(Thread.currentThread(), () -> closing.set(startClose(in, in::closeWaits)));
            assertNull(readOrClosed(where, () -> ShortRead.ARRAY.read(in)), where + ": the read returned plaintext");
            assertTrue(closing.get() != null, where + ": close() ran inside the read");
            closing.get().join();
            assertThrows(ClosedChannelException.class, () -> in.read(new byte[10], 0, 10), where + ": the next read");
            assertEquals(0, engine.open(), where + ": ciphers left open");
            KeyLifetimeTest.assertNoCopies(messageKey, List.of(in));
        }
    }

    /**
     * close() runs, whole, while the first read reads the header from the wrapped stream, before
     * it derives the message key: the read fails as closed. Before, it derived from the input key
     * that close() had destroyed and threw IllegalStateException ("AES key has been destroyed").
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeWhileTheFirstReadReadsTheHeaderFailsTheReadAsClosed(EngineKind kind) throws IOException {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        AtomicReference<GcmInputStream> stream = new AtomicReference<>();
        AtomicBoolean closed = new AtomicBoolean();
        GcmInputStream in = gcm(engine).decrypt(new ByteArrayInputStream(sealed(kind)) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                if (closed.compareAndSet(false, true)) {
                    closeOnAnotherThread(stream.get());
                }
                return super.read(b, off, len);
            }
        });
        stream.set(in);
        assertNull(readOrClosed("", () -> ShortRead.ARRAY.read(in)), "the read returned plaintext");
        assertTrue(closed.get(), "close() ran inside the read");
        assertEquals(0, engine.open(), "ciphers left open");
    }

    /**
     * The sealed bytes as a stream whose close() ends a read blocked in it with an error, as a
     * socket's or a pipe's does: the first read call at or past {@code closeAt} starts close() of
     * the decrypting stream on another thread, and once that close() has closed this stream
     * (it ended, or waits for the read's lock) the call throws.
     */
    private static final class ClosedWhileReading extends InputStream {
        private final byte[] sealed;
        private final int closeAt;
        private final AtomicReference<GcmInputStream> stream = new AtomicReference<>();
        private volatile boolean closed;
        private int pos;
        private Closing closing;
        /** What a read threw once close() had closed this stream (the first such error). */
        private IOException thrown;

        ClosedWhileReading(byte[] sealed, int closeAt) {
            this.sealed = sealed;
            this.closeAt = closeAt;
        }

        @Override
        public int read() {
            throw new UnsupportedOperationException("the stream reads arrays");
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (closing == null && pos >= closeAt) {
                GcmInputStream in = stream.get();
                closing = startClose(in, in::closeWaits); // close() closed this stream first
            }
            if (closed) {
                IOException e = new IOException("Stream closed");
                if (thrown == null) {
                    thrown = e;
                }
                throw e;
            }
            if (pos == sealed.length) {
                return -1;
            }
            int n = Math.min(len, sealed.length - pos);
            System.arraycopy(sealed, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /**
     * close() on another thread, with {@code closeUnderlying(true)}, closes the wrapped stream
     * while a read waits in it, which then throws: at the header, within the first MiB, and (at
     * parallelism 2) while a read reads the next batch ahead. The read fails as closed, with the
     * wrapped stream's error as the cause, not with that error, and returns only authentic
     * plaintext before that. Before, the read at parallelism 1 threw the wrapped stream's error,
     * and one during a read-ahead failed as closed with no cause.
     */
    @ParameterizedTest(name = "{0}, parallelism {1}")
    @MethodSource("kindsAndParallelism")
    void closeThatEndsAReadBlockedInTheWrappedStreamFailsItAsClosed(EngineKind kind, int parallelism)
            throws IOException {
        byte[] sealed = sealed(kind, LONG_PLAIN);
        long firstMiB = GcmInputStream.PARALLEL_AFTER / CHUNK_SIZE; // chunks read alone
        int pastFirstMiB = (int) GcmSeekableChannel.sealedOffset(firstMiB + 3);
        int inReadAhead = (int) GcmSeekableChannel.sealedOffset(firstMiB + GcmParallelWriter.BATCH_CHUNKS + 3);
        for (int closeAt : new int[] {0, 100_000, pastFirstMiB, inReadAhead}) {
            for (Read read : Read.values()) {
                String where = read + ", closed at ciphertext byte " + closeAt + ", parallelism " + parallelism;
                HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
                ClosedWhileReading source = new ClosedWhileReading(sealed, closeAt);
                GcmInputStream in = GcmStreams.builder().key(KEY).engine(engine).parallelism(parallelism)
                        .build().decrypt(source);
                source.stream.set(in);
                int pos = 0;
                while (true) {
                    byte[] got;
                    try {
                        got = read.read(in);
                    } catch (ClosedChannelException e) {
                        assertSame(source.thrown, e.getCause(), where + ": the cause is the wrapped stream's error");
                        break;
                    } catch (IOException | RuntimeException e) {
                        throw new AssertionError(where + ": a read racing close() threw " + e
                                + " instead of failing as closed", e);
                    }
                    assertTrue(got.length > 0, where + ": the message ended before close()");
                    assertArrayEquals(Arrays.copyOfRange(LONG_PLAIN, pos, pos + got.length), got, where);
                    pos += got.length;
                }
                assertTrue(source.closing != null, where + ": close() ran inside a read");
                source.closing.join();
                assertEquals(0, engine.open(), where + ": ciphers left open");
            }
        }
    }

    /** A channel read, from plaintext position {@link #AT}. */
    private enum ChannelRead {
        /** read(long, byte[], int, int): a reader of its own, one chunk through {@code open}. */
        POSITIONED,
        /** openChunk of chunk 1 from its sealed bytes: a reader of its own, {@code open}. */
        OPEN_CHUNK,
        /** The channel's own read(ByteBuffer), shorter than a chunk: the channel's reader, {@code open}. */
        SEQUENTIAL_SHORT,
        /** The same for two whole chunks straight into the caller's array: {@code openChunks}. */
        SEQUENTIAL_CHUNKS;

        static final int AT = CHUNK_SIZE;

        /** The bytes it returned. */
        byte[] read(GcmSeekableChannel channel, byte[] sealed) throws IOException {
            switch (this) {
                case POSITIONED -> {
                    byte[] b = new byte[100];
                    return Arrays.copyOf(b, Math.max(0, channel.read(AT, b, 0, b.length)));
                }
                case OPEN_CHUNK -> {
                    byte[] b = new byte[CHUNK_SIZE];
                    return Arrays.copyOf(b,
                            channel.openChunk(1, sealed, (int) GcmSeekableChannel.sealedOffset(1), b, 0));
                }
                default -> {
                    ByteBuffer b = ByteBuffer.allocate(this == SEQUENTIAL_SHORT ? 100 : 2 * CHUNK_SIZE);
                    channel.position(AT);
                    channel.read(b);
                    return Arrays.copyOf(b.array(), b.position());
                }
            }
        }
    }

    /**
     * close() runs on another thread just before a channel's read calls the engine (a hook at the
     * start of the engine call), for every kind of read: it returns the right plaintext or fails
     * as closed, and no cipher is left open. A positioned read keeps its own reader, which close()
     * leaves to it (closed when given back); close() waits for the channel's own read, which holds
     * the channel's lock. (It passed before: checked along with the stream's race above.)
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeJustBeforeAChannelReadCallsTheEngineFailsTheReadAsClosed(EngineKind kind) throws IOException {
        byte[] sealed = sealed(kind);
        for (ChannelRead read : ChannelRead.values()) {
            String where = read.toString();
            HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
            GcmSeekableChannel channel = gcm(engine).open(new MemorySeekableChannel(sealed));
            Thread reader = Thread.currentThread();
            AtomicReference<Closing> closing = new AtomicReference<>();
            Runnable hook = () -> {
                if (Thread.currentThread() == reader && closing.get() == null) {
                    // close() ended, or waits for the channel's lock
                    closing.set(startClose(channel, ReaderRaces::blocked));
                }
            };
            engine.onOpen(hook);
            engine.onOpenChunks((first, count) -> hook.run());
            byte[] got = readOrClosed(where, () -> read.read(channel, sealed));
            assertTrue(closing.get() != null, where + ": close() ran inside the read");
            closing.get().join();
            if (got != null) {
                assertTrue(got.length > 0, where + ": a read returned no byte and no end");
                assertArrayEquals(Arrays.copyOfRange(PLAIN, ChannelRead.AT, ChannelRead.AT + got.length), got, where);
            }
            assertThrows(ClosedChannelException.class, () -> channel.read(0, new byte[10], 0, 10),
                    where + ": the next read");
            assertEquals(0, engine.open(), where + ": ciphers left open");
        }
    }

    /** A read that may throw. */
    @FunctionalInterface
    private interface ReadStep {
        byte[] read() throws IOException;
    }

    /** What {@code read} returned, or null if it failed as closed; anything else it threw fails the test. */
    private static byte[] readOrClosed(String where, ReadStep read) {
        try {
            return read.read();
        } catch (ClosedChannelException e) {
            return null;
        } catch (IOException | RuntimeException e) {
            throw new AssertionError(where + ": a read racing close() threw " + e + " instead of failing as closed", e);
        }
    }

    /** The message key of {@code sealed} under {@link #KEY} and no context, from its salt. */
    private static byte[] messageKey(byte[] sealed) {
        Cobblestone.MessageKeys keys = Cobblestone.derive(KEY, Arrays.copyOf(sealed, SALT_LENGTH), new byte[0]);
        byte[] key = keys.key.clone();
        keys.destroy();
        return key;
    }

    private static int zeros(byte[] b) {
        int n = 0;
        for (byte x : b) {
            n += x == 0 ? 1 : 0;
        }
        return n;
    }
}
