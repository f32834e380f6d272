package io.sealpipe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;

/** The split-into-parts machinery under the parallel streams, on its own. */
class ParallelJobTest {

    /** A job whose parts run {@code body}; resources are plain tokens, {@code tokens} of them for workers. */
    static final class TestJob extends ParallelJob<Object> {
        final Set<String> threads = ConcurrentHashMap.newKeySet();
        final AtomicInteger ran = new AtomicInteger();
        volatile IntConsumer body = part -> { };
        volatile Exception toThrow;

        TestJob(int tokens) {
            super(new ResourcePool<>(Collections.nCopies(tokens, new Object())));
        }

        @Override
        protected void runPart(int part, Object resource) throws Exception {
            threads.add(Thread.currentThread().getName());
            ran.incrementAndGet();
            body.accept(part);
            if (toThrow != null && part == 1) {
                throw toThrow;
            }
        }
    }

    private static void sleep(int part) {
        try {
            Thread.sleep(30);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void workersTakePartsWhileTheOwnerWorksToo() throws IOException {
        TestJob job = new TestJob(8);
        job.body = ParallelJobTest::sleep;
        job.start(20, Workers.MAX_THREADS);
        job.await(job);
        assertEquals(20, job.ran.get());
        assertTrue(job.threads.contains(Thread.currentThread().getName()) || Workers.MAX_THREADS > 1);
        if (Workers.MAX_THREADS > 1) {
            assertTrue(job.threads.stream().anyMatch(t -> t.startsWith(Workers.THREAD_NAME_PREFIX)),
                    () -> "a worker helped: " + job.threads + "; workers: " + workerDump());
        }
        assertFalse(job.inProgress());
    }

    private static String workerDump() {
        StringBuilder b = new StringBuilder();
        Thread.getAllStackTraces().forEach((t, stack) -> {
            if (t.getName().startsWith(Workers.THREAD_NAME_PREFIX)) {
                b.append('\n').append(t.getName()).append(' ').append(t.getState());
                for (StackTraceElement e : stack) {
                    b.append("\n    at ").append(e);
                }
            }
        });
        return b.append("\nlive: ").append(Workers.liveThreads()).append(", pending: ").append(Workers.pendingJobs())
                .toString();
    }

    @Test
    void theOwnerFinishesAloneWhenNoWorkerHelps() throws IOException {
        TestJob job = new TestJob(0); // workers get no resource, so they cannot help
        job.start(5, 4);
        job.await(job);
        assertEquals(5, job.ran.get());
        assertEquals(Set.of(Thread.currentThread().getName()), job.threads);
    }

    @Test
    void roundsRepeat() throws IOException {
        TestJob job = new TestJob(4);
        for (int round = 1; round <= 200; round++) {
            job.start(round % 7 + 1, 2);
            job.await(job);
        }
        int expected = 0;
        for (int round = 1; round <= 200; round++) {
            expected += round % 7 + 1;
        }
        assertEquals(expected, job.ran.get());
    }

    @Test
    void theFirstFailureComesBack() {
        TestJob job = new TestJob(4);
        IOException io = new IOException("part failed");
        job.toThrow = io;
        job.start(4, 2);
        assertSame(io, assertThrows(IOException.class, () -> job.await(job)));

        IllegalStateException unchecked = new IllegalStateException("bad state");
        job.toThrow = unchecked;
        job.start(4, 2);
        assertSame(unchecked, assertThrows(IllegalStateException.class, () -> job.await(job)));

        GeneralSecurityException checked = new GeneralSecurityException("bad key");
        job.toThrow = checked;
        job.start(4, 2);
        assertSame(checked, assertThrows(IOException.class, () -> job.await(job)).getCause());
    }

    @Test
    void cancelSkipsWhatNobodyTook() {
        TestJob job = new TestJob(0); // nobody helps
        job.start(10, 0);
        assertEquals(null, job.cancelAndWait());
        assertEquals(0, job.ran.get());
        assertFalse(job.inProgress());
        assertEquals(null, job.shutdown(), "nothing in progress: nothing to do");
    }

    @Test
    void aRoundMustBeAwaitedBeforeTheNext() throws IOException {
        TestJob job = new TestJob(0);
        job.start(1, 0);
        assertThrows(IllegalStateException.class, () -> job.start(1, 0));
        job.await(job);
        assertThrows(IllegalStateException.class, () -> job.await(job), "no round in progress");
    }
}
