package io.sealpipe.snappy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.internal.TextLikeData;
import io.sealpipe.internal.Workers;
import io.sealpipe.snappy.PipelineRoundTripTest.Pipeline;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Failures in the middle of the pipeline, sequential and parallel: the wrapped output throws
 * part-way, the ciphertext is cut or modified inside a compressed frame. Each must end in a
 * clear error without a hang, release nothing past the damage (a prefix of the plaintext at
 * most), fail again on every later call, and leave no worker busy; when the test class is done,
 * every worker thread must have ended.
 */
public class PipelineFailureTest {
    static final byte[] PLAIN = TextLikeData.generate(42, 6 << 20);

    static Stream<Arguments> configurations() {
        return Stream.of(Pipeline.Mode.values()).flatMap(mode -> Stream.of(true, false).flatMap(compress ->
                Stream.of(1, 2, 4).map(parallelism -> Arguments.of(mode, compress, parallelism))));
    }

    @ParameterizedTest(name = "{0}, compress {1}, parallelism {2}")
    @MethodSource("configurations")
    void outputThatFailsPartWay(Pipeline.Mode mode, boolean compress, int parallelism) {
        Pipeline p = Pipeline.of(mode, compress, parallelism);
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            FailingSink sink = new FailingSink(1 << 20);
            OutputStream out = p.output(sink);
            IOException e = assertThrows(IOException.class, () -> {
                try {
                    for (int off = 0; off < PLAIN.length; off += 100_000) {
                        out.write(PLAIN, off, Math.min(100_000, PLAIN.length - off));
                    }
                } finally {
                    out.close();
                }
            });
            assertTrue(causes(e).contains("disk full"), "the sink's failure comes out: " + causes(e));
            assertThrows(IOException.class, () -> out.write(1), "a failed stream stays failed");
            out.close(); // idempotent
            assertTrue(sink.closed, "the wrapped stream is closed");
        });
        assertWorkersIdle();
    }

    static Stream<Arguments> compressedConfigurations() {
        return Stream.of(Pipeline.Mode.values()).flatMap(mode -> Stream.of(1, 2, 4).map(p -> Arguments.of(mode, p)));
    }

    @ParameterizedTest(name = "{0}, parallelism {1}")
    @MethodSource("compressedConfigurations")
    void truncatedInsideAFrame(Pipeline.Mode mode, int parallelism) throws IOException {
        byte[] sealed = Pipeline.of(mode, true, 1).encrypt(PLAIN, PipelineRoundTripTest.Writes.ONE_WRITE);
        Pipeline p = Pipeline.of(mode, true, parallelism);
        for (double at : new double[] {0.01, 0.37, 0.5, 0.93, 0.9999}) {
            byte[] cut = Arrays.copyOf(sealed, (int) (sealed.length * at));
            expectFailure(p, cut, mode == Pipeline.Mode.GCM ? "" : "truncated Snappy framed stream");
        }
        assertWorkersIdle();
    }

    @ParameterizedTest(name = "{0}, parallelism {1}")
    @MethodSource("compressedConfigurations")
    void modifiedInsideAFrame(Pipeline.Mode mode, int parallelism) throws IOException {
        byte[] sealed = Pipeline.of(mode, true, 1).encrypt(PLAIN, PipelineRoundTripTest.Writes.ONE_WRITE);
        Pipeline p = Pipeline.of(mode, true, parallelism);
        for (double at : new double[] {0.01, 0.37, 0.5, 0.93}) {
            byte[] bad = sealed.clone();
            bad[(int) (sealed.length * at)] ^= 0x10;
            expectFailure(p, bad, mode == Pipeline.Mode.GCM ? "failed authentication" : "corrupt Snappy framed stream");
        }
        assertWorkersIdle();
    }

    /**
     * Reads everything; the read must fail with {@code message} (GCM: a StreamAuthenticationException
     * in any case), after returning a plaintext prefix at most.
     */
    private static void expectFailure(Pipeline p, byte[] sealed, String message) {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            ByteArrayOutputStream released = new ByteArrayOutputStream();
            InputStream in = p.input(new ByteArrayInputStream(sealed));
            byte[] buffer = new byte[50_000];
            IOException e = assertThrows(IOException.class, () -> {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    released.write(buffer, 0, n);
                }
            }, "reading damaged ciphertext must fail");
            assertTrue(causes(e).contains(message), "expected '" + message + "' in: " + causes(e));
            if (p.mode() == Pipeline.Mode.GCM) {
                assertTrue(e instanceof StreamAuthenticationException, "GCM damage is an authentication failure: " + e);
            }
            byte[] got = released.toByteArray();
            assertArrayEquals(Arrays.copyOf(PLAIN, got.length), got, "only a prefix of the plaintext may come out");
            assertThrows(IOException.class, () -> in.read(buffer), "the failure repeats");
            in.close();
        });
    }

    static String causes(Throwable t) {
        StringBuilder s = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            s.append(c.getMessage()).append(" <- ");
        }
        return s.toString();
    }

    static List<Thread> workerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(Workers.THREAD_NAME_PREFIX) && t.isAlive())
                .collect(Collectors.toList());
    }

    /** Shortly after streams closed, no worker is running (they wait for work, or have ended). */
    public static void assertWorkersIdle() {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos(); // a safety net against a hang, not a timing claim
        while (true) {
            List<Thread> busy = workerThreads().stream()
                    .filter(t -> t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING
                            && t.getState() != Thread.State.TERMINATED)
                    .collect(Collectors.toList());
            if (busy.isEmpty()) {
                break;
            }
            if (System.nanoTime() > deadline) {
                fail("workers still running after their streams closed: " + busy);
            }
            Thread.onSpinWait();
        }
        assertTrue(Workers.liveThreads() <= Workers.MAX_THREADS);
    }

    /** Workers end once idle for their keep-alive: none outlives the streams for long. */
    public static void assertWorkersEnd() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMillis(Workers.KEEP_ALIVE_MILLIS + 60_000).toNanos();
        while (!workerThreads().isEmpty() || Workers.liveThreads() > 0) {
            if (System.nanoTime() > deadline) {
                fail("worker threads still alive " + (Workers.KEEP_ALIVE_MILLIS + 60_000) + " ms after the last stream: "
                        + workerThreads());
            }
            Thread.sleep(50);
        }
        assertEquals(0, Workers.liveThreads());
    }

    @AfterAll
    static void noWorkerOutlivesItsStreams() throws InterruptedException {
        assertWorkersEnd();
    }

    /** An output that takes {@code limit} bytes, then fails every write. */
    static final class FailingSink extends OutputStream {
        private final long limit;
        private long written;
        boolean closed;

        FailingSink(long limit) {
            this.limit = limit;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (written + len > limit) {
                throw new IOException("disk full (test)");
            }
            written += len;
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
