package io.sealpipe.gcm;

import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.gcm.Cobblestone.CHUNK_SIZE;
import static io.sealpipe.gcm.Cobblestone.HEADER_LENGTH;
import static io.sealpipe.gcm.Cobblestone.SEALED_CHUNK_SIZE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.HookedEngine;
import io.sealpipe.OtherThread;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The read-ahead of {@link GcmInputStream} at parallelism 2: while workers open one batch of
 * chunks, the reading thread reads the next batch from the wrapped stream. Each moment is forced
 * with latches in a hooked source and a hooked engine (no sleeps, no timing), on every engine:
 * that the next batch is asked for while the current one is being opened, that a failure of the
 * source during the read-ahead comes only after the plaintext before it, that a tampered chunk in
 * a batch read ahead releases nothing from it on, and that close() from another thread waits for
 * a batch in flight. Short reads also get the batch after theirs started for the workers between
 * reads: mixed reads of every kind, close() between reads and an engine failure there are tested
 * the same way.
 *
 * <p>Positions: the stream works alone for its first MiB (chunks 0..63); its first batch
 * (chunks 64..127) is read from the source up to {@link #FIRST_AHEAD} (one byte past the batch shows it
 * is not the final chunk), and the read-ahead during that batch starts there.
 */
@Timeout(120) // a safety net against a deadlock only: no test waits for time
class GcmReadAheadTest {
    private static final byte[] KEY = bytes(32, 32);
    private static final int BATCH = GcmParallelWriter.BATCH_CHUNKS;
    /** The first chunk opened with workers. */
    private static final int FIRST_PARALLEL = (int) (GcmInputStream.PARALLEL_AFTER / CHUNK_SIZE);
    /** The plaintext read alone, before the first batch. */
    private static final int ALONE = FIRST_PARALLEL * CHUNK_SIZE;
    /** Where the read-ahead during the first batch starts to read the source. */
    private static final long FIRST_AHEAD = HEADER_LENGTH + (long) (FIRST_PARALLEL + BATCH) * SEALED_CHUNK_SIZE + 1;
    private static final int MIB = 1 << 20;
    private static final int[] SIZES = {0, 1, 16383, 16384, 16385, ALONE - 1, ALONE, ALONE + 1, MIB,
        ALONE + MIB,      // the final chunk is empty, the first after the first batch
        ALONE + MIB + 1,
        ALONE + 2 * MIB - 1,  // the final chunk is the last of the second batch
        ALONE + 2 * MIB,      // the final chunk is empty, the first after the second batch
        5 * MIB + 12345};
    /** A message whose read crosses several batches. */
    private static final byte[] PLAIN = bytes(9, 4 * MIB + 777);

    /** The tests' own workers, so that each test can see that none is left running ({@link #shutDownWorkers}). */
    private final ExecutorService executor = Executors.newCachedThreadPool();

    @AfterEach
    void shutDownWorkers() {
        shutDown(executor);
    }

    private static GcmStreams gcm(CryptoEngine engine, int parallelism, ExecutorService executor) {
        GcmStreams.Builder b = GcmStreams.builder().key(KEY).engine(engine).parallelism(parallelism);
        if (executor != null) {
            b.executor(executor);
        }
        return b.build();
    }

    private static byte[] encrypt(EngineKind kind, byte[] plain) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = gcm(TestEngines.engine(kind), 1, null).encrypt(sink)) {
            out.write(plain);
        }
        return sink.toByteArray();
    }

    static Stream<Arguments> sizes() {
        return TestEngines.kinds().flatMap(kind -> Arrays.stream(SIZES).mapToObj(size -> Arguments.of(kind, size)));
    }

    /**
     * (1) Sizes around chunk and batch boundaries, at parallelism 1 and 2, read in 1 MiB reads
     * (straight into the caller's array), in 10000-byte reads (through the plaintext buffer), and
     * from a source that returns at most 5000 bytes a read: the same plaintext every time.
     */
    @ParameterizedTest(name = "{0}, {1} bytes")
    @MethodSource("sizes")
    void roundTripsAroundBatchBoundaries(EngineKind kind, int size) throws IOException {
        byte[] plain = bytes(size, size);
        byte[] sealed = encrypt(kind, plain);
        for (int parallelism : new int[] {1, 2}) {
            GcmStreams gcm = gcm(TestEngines.engine(kind), parallelism, null);
            String where = "parallelism " + parallelism;
            assertArrayEquals(plain, readAll(gcm.decrypt(new HookedSource(sealed)), MIB), where + ", 1 MiB reads");
            assertArrayEquals(plain, readAll(gcm.decrypt(new HookedSource(sealed)), 10_000), where + ", 10000-byte reads");
            HookedSource trickle = new HookedSource(sealed);
            trickle.maxRead = 5000;
            assertArrayEquals(plain, readAll(gcm.decrypt(trickle), MIB), where + ", short source reads");
            assertEquals(1, trickle.closes.get(), where + ": the source is closed once");
        }
    }

    private static byte[] readAll(GcmInputStream in, int readSize) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] b = new byte[readSize];
        try (in) {
            int n;
            while ((n = in.read(b, 0, b.length)) >= 0) {
                all.write(b, 0, n);
            }
            assertEquals(-1, in.read(b, 0, b.length), "and stays at the end");
        }
        return all.toByteArray();
    }

    /**
     * (2) The source is asked for the next batch while the current one is being opened: the
     * worker opening the first batch waits inside the engine until the source was asked for the
     * bytes after that batch, and the source waits until the batch is being opened. A stream that
     * read the next batch only after opening the current one would never get past this.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void theNextBatchIsReadWhileTheCurrentOneIsOpened(EngineKind kind) throws IOException {
        byte[] sealed = encrypt(kind, PLAIN);
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        HookedSource source = new HookedSource(sealed);
        CountDownLatch opening = new CountDownLatch(1);
        CountDownLatch askedAhead = new CountDownLatch(1);
        AtomicReference<String> openingThread = new AtomicReference<>();
        engine.onOpenChunks((first, count) -> {
            if (first >= FIRST_PARALLEL && first < FIRST_PARALLEL + BATCH && openingThread.compareAndSet(null, name())) {
                opening.countDown();
                await(askedAhead); // the first batch stays open until the source was asked for the next
            }
        });
        String reader = name();
        source.at(FIRST_AHEAD, () -> {
            askedAhead.countDown();
            await(opening); // and the source answers only while the batch is being opened
        });
        assertArrayEquals(PLAIN, readAll(gcm(engine, 2, executor).decrypt(source), MIB));
        assertTrue(source.ran.get(), "the source was asked for the bytes after the first batch");
        assertTrue(!reader.equals(openingThread.get()), "a worker opened the first batch while the reader read ahead");
        assertEquals(0, engine.open(), "ciphers left open");
    }

    /**
     * (3) The source fails during a read-ahead, a few chunks into the next batch: the reads first
     * return every chunk the source gave in full (with a byte after it), then throw the source's
     * own exception, once; the stream is not poisoned, and the next read asks the source again
     * and goes on to the end.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void aSourceFailureDuringTheReadAheadComesAfterThePlaintextBeforeIt(EngineKind kind) throws IOException {
        byte[] sealed = encrypt(kind, PLAIN);
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        HookedSource source = new HookedSource(sealed);
        source.maxRead = SEALED_CHUNK_SIZE; // the read-ahead takes several reads before it gets to the failure
        long failAt = FIRST_AHEAD + 3 * SEALED_CHUNK_SIZE + 7;
        IOException failure = new IOException("the network went away");
        source.failOnceAt(failAt, failure);
        CountDownLatch failed = source.failed;
        AtomicBoolean held = new AtomicBoolean();
        engine.onOpenChunks((first, count) -> {
            if (first >= FIRST_PARALLEL && first < FIRST_PARALLEL + BATCH && held.compareAndSet(false, true)) {
                await(failed); // the batch is not done before the read-ahead got to the failure
            }
        });
        int before = (int) ((failAt - HEADER_LENGTH - 1) / SEALED_CHUNK_SIZE) * CHUNK_SIZE; // whole chunks with a byte after
        try (GcmInputStream in = gcm(engine, 2, executor).decrypt(source)) {
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] b = new byte[MIB];
            IOException thrown = readUntilThrows(in, b, got);
            assertSame(failure, thrown, "the source's own exception");
            assertEquals(before, got.size(), "every whole chunk before the failure was returned first");
            assertEquals(got.size(), in.plaintextRead());
            int n;
            while ((n = in.read(b, 0, b.length)) >= 0) { // the source works again: the stream goes on
                got.write(b, 0, n);
            }
            assertArrayEquals(PLAIN, got.toByteArray());
        }
        assertEquals(1, source.failures.get());
    }

    /**
     * (4) A chunk of a batch that was read ahead is modified, swapped or cut off: the reads
     * return the chunks before it (and the caller's array holds nothing after them), then throw a
     * {@link StreamAuthenticationException} naming it, and keep throwing; in 1 MiB reads and in
     * 10000-byte reads.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void aTamperedChunkInABatchReadAheadReleasesNothingFromIt(EngineKind kind) throws IOException {
        byte[] sealed = encrypt(kind, PLAIN);
        GcmStreams gcm = gcm(TestEngines.engine(kind), 2, executor);
        // In the batch read ahead during the first one (in short reads: the batch opened
        // ahead while they take the first): its first chunk, and one in its middle.
        for (int bad : new int[] {FIRST_PARALLEL + BATCH, FIRST_PARALLEL + BATCH + 11}) {
            int at = HEADER_LENGTH + bad * SEALED_CHUNK_SIZE;
            byte[] flipped = sealed.clone();
            flipped[at + 100] ^= 1;
            byte[] swapped = sealed.clone();
            System.arraycopy(sealed, at + SEALED_CHUNK_SIZE, swapped, at, SEALED_CHUNK_SIZE);
            System.arraycopy(sealed, at, swapped, at + SEALED_CHUNK_SIZE, SEALED_CHUNK_SIZE);
            byte[] cut = Arrays.copyOf(sealed, at + SEALED_CHUNK_SIZE); // ends with a full chunk: "bad" reads as final
            for (int readSize : new int[] {MIB, 10_000}) {
                for (byte[] message : new byte[][] {flipped, swapped, cut}) {
                    expectFailureAt(gcm.decrypt(new HookedSource(message)), readSize, bad, message == cut);
                }
            }
        }
    }

    /** Reads {@code b.length} at a time into {@code got} until a read throws, and returns what it threw. */
    private static IOException readUntilThrows(GcmInputStream in, byte[] b, ByteArrayOutputStream got) {
        while (true) {
            try {
                int n = in.read(b, 0, b.length);
                assertTrue(n > 0, "no end before the failure");
                got.write(b, 0, n);
            } catch (IOException e) {
                return e;
            }
        }
    }

    private static void expectFailureAt(GcmInputStream in, int readSize, int bad, boolean truncated) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] b = new byte[readSize];
        StreamAuthenticationException thrown = null;
        try (in) {
            while (thrown == null) {
                Arrays.fill(b, (byte) 0);
                try {
                    int n = in.read(b, 0, b.length);
                    assertTrue(n > 0, "no end before the bad chunk");
                    assertTrue(isZero(b, n, b.length), "nothing after the bytes returned");
                    got.write(b, 0, n);
                } catch (StreamAuthenticationException e) {
                    thrown = e;
                    assertTrue(isZero(b, 0, b.length), "nothing left in the caller's array");
                }
            }
            assertEquals(truncated ? -1 : bad, thrown.chunk(), thrown.getMessage());
            assertTrue(thrown.getMessage().contains("chunk " + bad), thrown.getMessage());
            assertEquals((long) bad * CHUNK_SIZE, got.size(), "the chunks before the bad one");
            assertArrayEquals(Arrays.copyOf(PLAIN, got.size()), got.toByteArray());
            StreamAuthenticationException again = assertThrows(StreamAuthenticationException.class, () -> in.read(b, 0, b.length));
            assertEquals(thrown.getMessage(), again.getMessage(), "every later read throws the same");
        }
    }

    private static boolean isZero(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * (5) close() on another thread while a read is reading ahead (held in the source) waits for
     * that read's batch: it closes the source at once, frees no cipher while the batch is in
     * flight, and once the source answers the read fails as closed, every cipher is closed and
     * no worker is left running.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeWhileReadingAheadWaitsForTheBatch(EngineKind kind) throws Exception {
        byte[] sealed = encrypt(kind, PLAIN);
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        HookedSource source = new HookedSource(sealed);
        CountDownLatch readingAhead = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        source.at(FIRST_AHEAD, () -> {
            readingAhead.countDown();
            await(answer);
        });
        AtomicBoolean held = new AtomicBoolean();
        engine.onOpenChunks((first, count) -> {
            if (first >= FIRST_PARALLEL && held.compareAndSet(false, true)) {
                await(readingAhead); // the batch is not done before the read-ahead asks the source
            }
        });
        closeDuringABatch(engine, source, readingAhead, answer);
    }

    /** (5) The same while a worker is in the middle of opening the batch (held in the engine). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeWhileAWorkerOpensTheBatchWaitsForIt(EngineKind kind) throws Exception {
        byte[] sealed = encrypt(kind, PLAIN);
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        HookedSource source = new HookedSource(sealed);
        CountDownLatch opening = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        AtomicBoolean held = new AtomicBoolean();
        engine.onOpenChunks((first, count) -> {
            if (first >= FIRST_PARALLEL && held.compareAndSet(false, true)) {
                opening.countDown();
                await(answer);
            }
        });
        closeDuringABatch(engine, source, opening, answer);
    }

    private void closeDuringABatch(HookedEngine engine, HookedSource source, CountDownLatch inBatch,
            CountDownLatch answer) throws Exception {
        GcmInputStream in = gcm(engine, 2, executor).decrypt(source);
        OtherThread reader = OtherThread.start("reader", "the reads", () -> {
            byte[] b = new byte[MIB];
            while (in.read(b, 0, b.length) >= 0) {
                // read until close() stops it
            }
        });
        await(inBatch);
        OtherThread closer = OtherThread.start("closer", "close()", in::close);
        await(source.closed); // close() began: the source is closed first
        awaitWaiting(closer.thread(), "close() returned while a batch was in flight"); // then it waits for the batch
        assertTrue(engine.open() >= 2, "no cipher is freed while the batch is in flight");
        answer.countDown();
        Throwable readFailure = reader.awaitFailure();
        closer.join();
        assertInstanceOf(ClosedChannelException.class, readFailure, "the read fails as closed");
        assertEquals(0, engine.open(), "ciphers left open");
        assertEquals(1, source.closes.get(), "the source is closed once");
        in.close();
        assertEquals(1, source.closes.get(), "and only once");
    }

    /**
     * (6) At parallelism 2, reads of every kind mixed on one stream (short reads that go through
     * the plaintext buffer while the next batch is opened ahead, reads of a batch and more that
     * go straight into the caller's array, single bytes, skips, direct buffers), over a wrapped
     * stream and over a message in memory: every byte is the plaintext at its position.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void mixedReadsReturnThePlaintextAtParallelism2(EngineKind kind) throws IOException {
        byte[] sealed = encrypt(kind, PLAIN);
        GcmStreams gcm = gcm(TestEngines.engine(kind), 2, executor);
        readMixed(gcm.decrypt(new HookedSource(sealed)), "from a stream");
        readMixed(gcm.decrypt(ByteBuffer.wrap(sealed)), "from memory");
    }

    private static void readMixed(GcmInputStream in, String where) throws IOException {
        byte[] b = new byte[2 * MIB + 3];
        ByteBuffer direct = ByteBuffer.allocateDirect(50_000);
        int pos = 0;
        try (in) {
            for (int step = 0; pos < PLAIN.length; step++) {
                String what = where + ", step " + step + " at " + pos;
                int n;
                switch (step % 8) {
                    case 0, 4 -> n = checkRead(in, b, 0, 10_000, pos, what);
                    case 1 -> {
                        n = 1;
                        assertEquals(PLAIN[pos] & 0xff, in.read(), what);
                    }
                    case 2 -> n = checkRead(in, b, 3, MIB + 5, pos, what);
                    case 3 -> {
                        n = (int) in.skip(40_000);
                        assertEquals(Math.min(40_000, PLAIN.length - pos), n, what);
                    }
                    case 5 -> {
                        direct.clear();
                        n = in.read(direct);
                        assertTrue(n > 0, what);
                        direct.flip();
                        byte[] got = new byte[n];
                        direct.get(got);
                        assertArrayEquals(Arrays.copyOfRange(PLAIN, pos, pos + n), got, what);
                    }
                    case 6 -> n = checkRead(in, b, 0, 16_384, pos, what);
                    default -> n = checkRead(in, b, 0, 2 * MIB + 3, pos, what);
                }
                pos += n;
                assertEquals(pos, in.plaintextRead(), what);
            }
            assertEquals(-1, in.read(b, 0, 10_000), where + ": the end");
            assertEquals(-1, in.read(), where + ": the end");
        }
    }

    private static int checkRead(GcmInputStream in, byte[] b, int off, int len, int pos, String what) throws IOException {
        int n = in.read(b, off, len);
        assertTrue(n > 0, what + ": no end before the plaintext's");
        assertArrayEquals(Arrays.copyOfRange(PLAIN, pos, pos + n), Arrays.copyOfRange(b, off, off + n), what);
        return n;
    }

    /**
     * (7) Short reads got the next batch started for the workers, and the stream is closed
     * between reads: on the reading thread (the usual way to stop reading early) once a worker
     * has begun that batch, and on another thread while a worker is in the middle of it, which
     * close() waits for. Every cipher is closed, no worker is left running, and a later read
     * fails as closed.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeBetweenReadsWithABatchOpenedAhead(EngineKind kind) throws Exception {
        byte[] sealed = encrypt(kind, PLAIN);
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        AtomicReference<AheadHooks> hooks = new AtomicReference<>();
        engine.onOpenChunks((first, count) -> hooks.get().opening(first));
        GcmStreams gcm = gcm(engine, 2, executor);
        AheadHooks onReader = new AheadHooks(false);
        hooks.set(onReader);
        GcmInputStream in = gcm.decrypt(onReader.source(sealed));
        readUpToTheBatchOpenedAhead(in);
        await(onReader.aheadBegun);
        in.close();
        assertEquals(0, engine.open(), "ciphers left open after close() on the reading thread");
        assertThrows(ClosedChannelException.class, () -> in.read(new byte[10], 0, 10));

        AheadHooks onOther = new AheadHooks(true);
        hooks.set(onOther);
        GcmInputStream held = gcm.decrypt(onOther.source(sealed));
        readUpToTheBatchOpenedAhead(held);
        await(onOther.aheadBegun); // a worker holds a part of the batch opened ahead
        OtherThread closer = OtherThread.start("closer", "close()", held::close);
        awaitWaiting(closer.thread(), "close() returned while a worker was opening a batch"); // it waits for the worker's part
        assertTrue(engine.open() >= 2, "no cipher is freed while a worker holds one");
        onOther.answer.countDown();
        closer.join();
        assertEquals(0, engine.open(), "ciphers left open");
        assertThrows(ClosedChannelException.class, () -> held.read(new byte[10], 0, 10));
    }

    /**
     * Makes sure a stream starts the batch after its first one ahead, and tells when a worker
     * begins it. The read-ahead stops reading once a batch is open, so the first batch is held in
     * the worker that begins it until the source was asked for the bytes after it (the source
     * then gives all it is asked for in that one read): the next batch is then buffered whole and
     * started ahead. A worker that begins that batch counts {@link #aheadBegun} down and, if
     * {@code hold}, waits for {@link #answer}.
     */
    private static final class AheadHooks {
        final CountDownLatch askedAhead = new CountDownLatch(1);
        final CountDownLatch aheadBegun = new CountDownLatch(1);
        final CountDownLatch answer = new CountDownLatch(1);
        private final AtomicBoolean firstHeld = new AtomicBoolean();
        private final AtomicBoolean aheadHeld = new AtomicBoolean();
        private final boolean hold;

        AheadHooks(boolean hold) {
            this.hold = hold;
        }

        HookedSource source(byte[] sealed) {
            HookedSource source = new HookedSource(sealed);
            source.at(FIRST_AHEAD, askedAhead::countDown);
            return source;
        }

        void opening(long first) {
            if (first >= FIRST_PARALLEL && first < FIRST_PARALLEL + BATCH && firstHeld.compareAndSet(false, true)) {
                await(askedAhead);
            } else if (first >= FIRST_PARALLEL + BATCH && aheadHeld.compareAndSet(false, true)) {
                aheadBegun.countDown();
                if (hold) {
                    await(answer);
                }
            }
        }
    }

    /**
     * Reads the first MiB (the stream alone), then 10000 bytes: that read opens the first batch
     * with the workers and starts the next one for them, which no read waits for yet.
     */
    private static void readUpToTheBatchOpenedAhead(GcmInputStream in) throws IOException {
        byte[] b = new byte[ALONE];
        assertEquals(ALONE, in.readNBytes(b, 0, ALONE));
        assertEquals(10_000, in.read(b, 0, 10_000));
        assertArrayEquals(Arrays.copyOfRange(PLAIN, ALONE, ALONE + 10_000), Arrays.copyOf(b, 10_000));
    }

    /**
     * (8) The engine fails (throws) while a batch is opened, in the batch after the first
     * parallel one (opened ahead in short reads, straight into the caller's array in long
     * ones): the reads return the batches before it, then throw an IOException caused by
     * the engine's exception, and every later read throws; close() frees every cipher.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void anEngineFailureInABatchFailsTheStream(EngineKind kind) throws IOException {
        byte[] sealed = encrypt(kind, PLAIN);
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        IllegalStateException broken = new IllegalStateException("the engine broke");
        engine.onOpenChunks((first, count) -> {
            if (first >= FIRST_PARALLEL + BATCH) {
                throw broken;
            }
        });
        GcmStreams gcm = gcm(engine, 2, executor);
        for (int readSize : new int[] {10_000, MIB}) {
            GcmInputStream in = gcm.decrypt(new HookedSource(sealed));
            byte[] b = new byte[readSize];
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            try (in) {
                got.write(in.readNBytes(ALONE)); // the stream alone; its batches then start at FIRST_PARALLEL
                IOException thrown = readUntilThrows(in, b, got);
                assertSame(broken, thrown.getCause(), readSize + "-byte reads: " + thrown);
                assertEquals((long) (FIRST_PARALLEL + BATCH) * CHUNK_SIZE, got.size(), readSize + "-byte reads: the batches before it");
                assertArrayEquals(Arrays.copyOf(PLAIN, got.size()), got.toByteArray());
                IOException again = assertThrows(IOException.class, () -> in.read(b, 0, b.length));
                assertSame(broken, again.getCause(), "every later read throws");
            }
            assertEquals(0, engine.open(), readSize + "-byte reads: ciphers left open");
        }
    }

    /**
     * (9) In short reads every batch after the first parallel one is started ahead: once the read
     * that takes a batch has returned, a worker begins the batch after it while no read is in
     * progress. (The read-ahead during a batch stops once that batch is open; a stream that did
     * not read the rest of the next batch before starting it would start only every other batch
     * ahead and never get past the wait below.)
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void everyBatchIsStartedAheadInShortReads(EngineKind kind) throws Exception {
        byte[] sealed = encrypt(kind, PLAIN);
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        int batches = (PLAIN.length / CHUNK_SIZE - FIRST_PARALLEL) / BATCH; // whole batches, each followed by more
        CountDownLatch[] begun = new CountDownLatch[batches];
        Arrays.setAll(begun, k -> new CountDownLatch(1));
        Thread reader = Thread.currentThread();
        engine.onOpenChunks((first, count) -> {
            int k = (int) ((first - FIRST_PARALLEL) / BATCH);
            if (Thread.currentThread() != reader && first >= FIRST_PARALLEL && k < batches) {
                begun[k].countDown();
            }
        });
        try (GcmInputStream in = gcm(engine, 2, executor).decrypt(new HookedSource(sealed))) {
            byte[] b = new byte[CHUNK_SIZE];
            assertEquals(ALONE, in.readNBytes(new byte[ALONE], 0, ALONE));
            for (int k = 0; k + 1 < batches; k++) {
                assertEquals(CHUNK_SIZE, in.read(b, 0, CHUNK_SIZE)); // takes batch k (the first: opens it)
                assertTrue(begun[k + 1].await(60, TimeUnit.SECONDS), // a safety net: it passes at once when it passes
                        "batch " + (k + 1) + " was not started ahead after the read that took batch " + k);
                assertEquals(BATCH * CHUNK_SIZE - CHUNK_SIZE, in.readNBytes(new byte[BATCH * CHUNK_SIZE], 0,
                        BATCH * CHUNK_SIZE - CHUNK_SIZE), "the rest of batch " + k);
            }
            assertArrayEquals(Arrays.copyOfRange(PLAIN, (int) in.plaintextRead(), PLAIN.length), in.readAllBytes());
        }
    }

    /** Waits until {@code closer} parks (close() waits for something); fails with {@code ifReturned} if it ends first. */
    private static void awaitWaiting(Thread closer, String ifReturned) {
        while (closer.getState() != Thread.State.WAITING) {
            assertTrue(closer.isAlive(), ifReturned);
            Thread.onSpinWait();
        }
    }

    /** Shuts the test's executor down and waits for its threads: no worker is left running. */
    private static void shutDown(ExecutorService executor) {
        executor.shutdown();
        try {
            assertTrue(executor.awaitTermination(60, TimeUnit.SECONDS), "a worker is still running"); // a safety net only
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static String name() {
        return Thread.currentThread().getName();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Ciphertext from an array, with hooks: at most {@link #maxRead} bytes a read; a step that
     * runs once, before the first read at or after a position; an exception thrown once by the
     * read at a position (reads stop there before it); and counts of closes.
     */
    private static final class HookedSource extends InputStream {
        private final byte[] data;
        private int pos;
        int maxRead = Integer.MAX_VALUE;
        private long hookAt = Long.MAX_VALUE;
        private Runnable hook;
        final AtomicBoolean ran = new AtomicBoolean();
        private long failAt = Long.MAX_VALUE;
        private IOException failure;
        final CountDownLatch failed = new CountDownLatch(1);
        final AtomicInteger failures = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();
        final CountDownLatch closed = new CountDownLatch(1);

        HookedSource(byte[] data) {
            this.data = data;
        }

        void at(long position, Runnable step) {
            hookAt = position;
            hook = step;
        }

        void failOnceAt(long position, IOException e) {
            failAt = position;
            failure = e;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (pos >= hookAt && ran.compareAndSet(false, true)) {
                hook.run();
            }
            if (pos == failAt && failures.get() == 0) {
                failures.incrementAndGet();
                failed.countDown();
                throw failure;
            }
            if (pos == data.length) {
                return -1;
            }
            int n = Math.min(Math.min(len, maxRead), data.length - pos);
            if (pos < failAt && failures.get() == 0) {
                n = (int) Math.min(n, failAt - pos);
            }
            System.arraycopy(data, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public void close() {
            closes.incrementAndGet();
            closed.countDown();
        }
    }
}
