package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.internal.TextLikeData;
import io.sealpipe.snappy.PipelineFailureTest;
import io.sealpipe.snappy.PipelineRoundTripTest;
import io.sealpipe.snappy.PipelineRoundTripTest.Pipeline;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 29's failing sources and sinks: the stream a pipeline wraps throws at its Nth call of one
 * kind (read, write, flush or close), for every N over the calls a whole run makes (all of them
 * up to {@value #MAX_POINTS}, else that many chosen by the seed, always with the first and the
 * last), for GCM and CTR, with and without Snappy, at parallelism 1 and 2. Each time:
 *
 * <ul>
 *   <li>the caller gets the very exception the wrapped stream threw (other failures on the way
 *       out attached to it as suppressed), from the call it made or, for a failure inside
 *       {@code close()}, from {@code close()};
 *   <li>every later call fails, and a second {@code close()} neither throws something else nor
 *       hangs;
 *   <li>a reader has returned only a prefix of the plaintext;
 *   <li>a GCM writer has left bytes that either fail to decrypt or are the whole message (only
 *       when the failure came after the last chunk was written: the wrapped stream's flush or
 *       close inside {@code close()}): never a shorter message that verifies;
 *   <li>no worker is left running (and {@code ResourcePool.give} throws if a cipher is given back
 *       twice).
 * </ul>
 *
 * Rerun one case with {@code -Dsealpipe.test.seed=N}; the seed in use is in each failure message.
 */
class FaultAtNthCallTest {
    private static final long SEED = Long.getLong("sealpipe.test.seed", 29);
    private static final int MAX_POINTS = 24;
    private static final byte[] PLAIN = TextLikeData.generate(29, 3 << 20);

    enum Kind { READ, WRITE, FLUSH, CLOSE }

    static Stream<Arguments> pipelines() {
        return Stream.of(Pipeline.Mode.values()).flatMap(mode -> Stream.of(false, true).flatMap(compress ->
                Stream.of(1, 2).map(parallelism -> Arguments.of(mode, compress, parallelism))));
    }

    @ParameterizedTest(name = "{0}, compress {1}, parallelism {2}")
    @MethodSource("pipelines")
    void aSinkThatFailsAtItsNthCall(Pipeline.Mode mode, boolean compress, int parallelism) throws IOException {
        Pipeline p = Pipeline.of(mode, compress, parallelism);
        Faulty counting = new Faulty(null, 0);
        byte[] whole = write(p, counting);
        assertArrayEquals(PLAIN, p.decrypt(whole, 1 << 16), "the run without a fault round-trips");
        for (Kind kind : List.of(Kind.WRITE, Kind.FLUSH, Kind.CLOSE)) {
            for (long n : points(counting.plan.counts.get(kind), kind)) {
                Faulty sink = new Faulty(kind, n);
                String where = mode + ", compress " + compress + ", parallelism " + parallelism
                        + ": " + kind + " call " + n
                        + " of " + counting.plan.counts.get(kind) + ", seed " + SEED;
                assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                    OutputStream out = p.output(sink);
                    IOException e = assertThrows(IOException.class, () -> writeAll(out), where);
                    assertSame(sink.plan.thrown, e, where + ": the wrapped stream's own exception reaches the caller");
                    assertThrows(IOException.class, () -> out.write(PLAIN, 0, 10),
                            where + ": a failed stream stays failed");
                    out.close(); // a second close: nothing new, no hang
                }, where);
                byte[] left = sink.bytes.toByteArray();
                if (mode == Pipeline.Mode.GCM) {
                    noShorterValidMessage(p, left, where);
                }
                PipelineFailureTest.assertWorkersIdle();
            }
        }
    }

    @ParameterizedTest(name = "{0}, compress {1}, parallelism {2}")
    @MethodSource("pipelines")
    void aSourceThatFailsAtItsNthCall(Pipeline.Mode mode, boolean compress, int parallelism) throws IOException {
        Pipeline p = Pipeline.of(mode, compress, parallelism);
        byte[] sealed = p.encrypt(PLAIN, PipelineRoundTripTest.Writes.ONE_WRITE);
        Source counting = new Source(sealed, null, 0);
        assertArrayEquals(PLAIN, readAll(p.input(counting), null), "the run without a fault round-trips");
        for (Kind kind : List.of(Kind.READ, Kind.CLOSE)) {
            for (long n : points(counting.plan.counts.get(kind), kind)) {
                Source source = new Source(sealed, kind, n);
                String where = mode + ", compress " + compress + ", parallelism " + parallelism
                        + ": " + kind + " call " + n
                        + " of " + counting.plan.counts.get(kind) + ", seed " + SEED;
                assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                    InputStream in = p.input(source);
                    ByteArrayOutputStream released = new ByteArrayOutputStream();
                    IOException e = assertThrows(IOException.class, () -> readAll(in, released), where);
                    assertSame(source.plan.thrown, e,
                            where + ": the wrapped stream's own exception reaches the caller");
                    byte[] got = released.toByteArray();
                    assertArrayEquals(Arrays.copyOf(PLAIN, got.length), got,
                            where + ": only a prefix of the plaintext");
                    if (kind == Kind.READ) {
                        assertThrows(IOException.class, () -> in.read(new byte[10]),
                                where + ": a failed stream stays failed");
                    }
                    in.close(); // a second close: nothing new, no hang
                }, where);
                PipelineFailureTest.assertWorkersIdle();
            }
        }
    }

    @AfterAll
    static void noWorkerOutlivesItsStreams() throws InterruptedException {
        PipelineFailureTest.assertWorkersEnd();
    }

    /**
     * What a GCM writer left: a message that fails to decrypt, or (when the wrapped stream failed
     * only after the last chunk reached it: its flush or close inside {@code close()}) the whole
     * plaintext; never a shorter one.
     */
    private static void noShorterValidMessage(Pipeline p, byte[] left, String where) {
        byte[] back;
        try {
            back = p.decrypt(left, 1 << 16);
        } catch (IOException | AssertionError expected) {
            return; // rejected: what must happen to any message cut short
        }
        if (!Arrays.equals(PLAIN, back)) {
            fail(where + ": the writer left a message of " + back.length + " bytes that verifies (the plaintext has "
                    + PLAIN.length + ")");
        }
    }

    /** The calls to fail at: every one up to {@link #MAX_POINTS}, else the first, the last and seeded others. */
    private static long[] points(long calls, Kind kind) {
        assertTrue(calls > 0, "the run made " + kind + " calls");
        if (calls <= MAX_POINTS) {
            return java.util.stream.LongStream.rangeClosed(1, calls).toArray();
        }
        SplittableRandom random = new SplittableRandom(SEED ^ kind.ordinal() ^ calls);
        TreeSet<Long> points = new TreeSet<>(List.of(1L, calls));
        while (points.size() < MAX_POINTS) {
            points.add(1 + random.nextLong(calls));
        }
        return points.stream().mapToLong(Long::longValue).toArray();
    }

    /** The whole run's bytes through {@code sink} (which must not fail). */
    private static byte[] write(Pipeline p, Faulty sink) {
        try {
            OutputStream out = p.output(sink);
            writeAll(out);
        } catch (IOException e) {
            throw new AssertionError("the counting run failed", e);
        }
        return sink.bytes.toByteArray();
    }

    /** Seeded writes of 1 byte to 400 KB with a flush every fifth, then close. */
    private static void writeAll(OutputStream out) throws IOException {
        SplittableRandom random = new SplittableRandom(SEED);
        try (out) {
            for (int off = 0, i = 0; off < PLAIN.length; i++) {
                int n = Math.min(PLAIN.length - off, i % 3 == 0 ? 1 + random.nextInt(300) : random.nextInt(400_000));
                out.write(PLAIN, off, n);
                off += n;
                if (i % 5 == 4) {
                    out.flush();
                }
            }
        }
    }

    /** Reads to the end in seeded read sizes (keeping what came out in {@code released}), then closes. */
    private static byte[] readAll(InputStream in, ByteArrayOutputStream released) throws IOException {
        ByteArrayOutputStream back = released != null ? released : new ByteArrayOutputStream();
        SplittableRandom random = new SplittableRandom(SEED);
        byte[] buffer = new byte[300_000];
        try (in) {
            for (int n; (n = in.read(buffer, 0, 1 + random.nextInt(buffer.length))) >= 0; ) {
                back.write(buffer, 0, n);
            }
        }
        return back.toByteArray();
    }

    /** Counts its calls by kind; throws a new IOException at call {@code n} of {@code kind} (none if null). */
    private static final class Calls {
        final Map<Kind, Long> counts = new EnumMap<>(Kind.class);
        final Kind kind;
        final long n;
        IOException thrown;

        Calls(Kind kind, long n) {
            this.kind = kind;
            this.n = n;
            for (Kind k : Kind.values()) {
                counts.put(k, 0L);
            }
        }

        void call(Kind k) throws IOException {
            long count = counts.merge(k, 1L, Long::sum);
            if (k == kind && count == n) {
                assertEquals(null, thrown, "one fault per run");
                thrown = new IOException("injected: " + k + " call " + n);
                throw thrown;
            }
        }
    }

    /** A sink that keeps what it is given, failing as {@link Calls} says. */
    private static final class Faulty extends OutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final Calls plan;

        Faulty(Kind kind, long n) {
            plan = new Calls(kind, n);
        }

        @Override
        public void write(int b) throws IOException {
            plan.call(Kind.WRITE);
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            plan.call(Kind.WRITE);
            bytes.write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            plan.call(Kind.FLUSH);
        }

        @Override
        public void close() throws IOException {
            plan.call(Kind.CLOSE);
        }
    }

    /** A source over {@code sealed}, failing as {@link Calls} says. */
    private static final class Source extends InputStream {
        private final ByteArrayInputStream in;
        final Calls plan;

        Source(byte[] sealed, Kind kind, long n) {
            in = new ByteArrayInputStream(sealed);
            plan = new Calls(kind, n);
        }

        @Override
        public int read() throws IOException {
            plan.call(Kind.READ);
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            plan.call(Kind.READ);
            return in.read(b, off, len);
        }

        @Override
        public void close() throws IOException {
            plan.call(Kind.CLOSE);
        }
    }
}
