package io.sealpipe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;

/** The split-into-parts machinery under the parallel streams, on its own. */
class ParallelJobTest {

    /** A job whose parts run {@code body}; resources are plain tokens, {@code tokens} of them for helpers. */
    static final class TestJob extends ParallelJob<Object> {
        final Set<String> threads = ConcurrentHashMap.newKeySet();
        final AtomicInteger ran = new AtomicInteger();
        volatile IntConsumer body = part -> { };
        volatile Exception toThrow;
        boolean backToBack;

        TestJob(int tokens) {
            this(tokens, Workers.shared());
        }

        TestJob(int tokens, Executor executor) {
            super(new ResourcePool<>(java.util.stream.Stream.generate(Object::new).limit(tokens).toList()), executor);
        }

        @Override
        protected boolean roundsFollowEachOther() {
            return backToBack;
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

    /** Waits for {@code latch}; the timeout only turns a lost helper into a failure instead of a hang. */
    private static void awaitOrFail(CountDownLatch latch, String what) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) {
                throw new AssertionError(what + ": " + workerDump());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Two parts that each wait until both are running: the round can only finish if a helper
     * runs one part while the owner runs the other.
     */
    private static TestJob twoPartsThatNeedAHelper(Executor executor) {
        TestJob job = new TestJob(1, executor);
        CountDownLatch bothRunning = new CountDownLatch(2);
        job.body = part -> {
            bothRunning.countDown();
            awaitOrFail(bothRunning, "part " + part + " ran alone: no helper took the other part");
        };
        return job;
    }

    @Test
    void aHelperTakesPartsWhileTheOwnerWorksToo() throws IOException {
        TestJob job = twoPartsThatNeedAHelper(Workers.shared());
        job.start(2, 1);
        job.await(job);
        assertEquals(2, job.ran.get());
        assertTrue(job.threads.contains(Thread.currentThread().getName()), "the owner ran a part: " + job.threads);
        assertTrue(job.threads.stream().anyMatch(t -> t.startsWith(Workers.THREAD_NAME_PREFIX)),
                () -> "a worker ran a part: " + job.threads);
        assertFalse(job.inProgress());
    }

    /**
     * The failure of issue 11: once many rounds had asked for more helpers than there were free
     * workers, the old pool's table of pending jobs was full and every later request for help
     * was dropped. Here every worker is held busy while 200 rounds ask for help they cannot get;
     * a job that asks for help then must still get it once the workers are free.
     */
    @Test
    void helpAskedForWhileEveryWorkerIsBusyComesWhenOneIsFree() throws Exception {
        int threads = Workers.MAX_THREADS;
        CountDownLatch blockersRunning = new CountDownLatch(threads + 1);
        CountDownLatch release = new CountDownLatch(1);
        TestJob blocker = new TestJob(threads);
        blocker.body = part -> {
            blockersRunning.countDown();
            awaitOrFail(release, "the test never released the blocking parts");
        };
        Thread blockerOwner = new Thread(() -> {
            blocker.start(threads + 1, threads);
            try {
                blocker.await(blocker);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }, "blocker-owner");
        blockerOwner.start();
        awaitOrFail(blockersRunning, "the workers did not all take a blocking part");

        for (int i = 0; i < 200; i++) {
            TestJob unhelped = new TestJob(8);
            unhelped.start(4, 8);
            unhelped.await(unhelped); // the owner does it all: every worker is blocked
            assertEquals(4, unhelped.ran.get());
        }

        TestJob probe = twoPartsThatNeedAHelper(Workers.shared());
        probe.start(2, 1);
        release.countDown();
        probe.await(probe);
        blockerOwner.join();
        assertEquals(2, probe.ran.get());
        assertTrue(probe.threads.stream().anyMatch(t -> t.startsWith(Workers.THREAD_NAME_PREFIX)), () -> "" + probe.threads);
    }

    @Test
    void helpersRunOnTheApplicationsExecutor() throws Exception {
        ExecutorService app = Executors.newFixedThreadPool(2, r -> new Thread(r, "app-thread"));
        try {
            TestJob job = twoPartsThatNeedAHelper(app);
            job.start(2, 1);
            job.await(job);
            assertEquals(Set.of(Thread.currentThread().getName(), "app-thread"), job.threads);
        } finally {
            app.shutdownNow();
        }
    }

    @Test
    void anExecutorThatRejectsOrRunsInlineLeavesTheWorkToTheOwner() throws IOException {
        TestJob rejected = new TestJob(4, task -> {
            throw new RejectedExecutionException("full");
        });
        rejected.start(6, 3);
        rejected.await(rejected);
        assertEquals(6, rejected.ran.get());

        TestJob inline = new TestJob(4, Runnable::run); // helpers run in start(), in this thread
        inline.start(6, 3);
        inline.await(inline);
        assertEquals(6, inline.ran.get());
        assertEquals(Set.of(Thread.currentThread().getName()), inline.threads);
    }

    /**
     * An executor that cannot start a thread throws OutOfMemoryError ("unable to create native
     * thread") from execute: the owner does the work, as for a rejection. Before, the Error came
     * out of start() with the helper still counted as requested.
     */
    @Test
    void anExecutorThatCannotStartAThreadLeavesTheWorkToTheOwner() throws IOException {
        TestJob job = new TestJob(4, task -> {
            throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource"
                    + " limits reached");
        });
        try {
            job.start(6, 3);
        } catch (OutOfMemoryError e) { // caught: an OutOfMemoryError reaching JUnit ends the test JVM
            throw new AssertionError("start() threw the executor's error instead of leaving the work to the owner", e);
        }
        job.await(job);
        assertEquals(6, job.ran.get());
        assertEquals(Set.of(Thread.currentThread().getName()), job.threads);
    }

    @Test
    void anExecutorThatFailsToTakeATaskIsAskedAgainNextRound() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        List<Runnable> taken = new ArrayList<>();
        TestJob job = new TestJob(4, task -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("not now"); // not a RejectedExecutionException
            }
            taken.add(task);
        });
        job.start(4, 1);
        job.await(job);
        assertEquals(4, job.ran.get(), "the owner did the round the executor would not help with");
        job.start(4, 1);
        job.await(job);
        assertEquals(1, taken.size(), "the failed request was not counted: the next round asked again");
    }

    @Test
    void anInlineExecutorWithBackToBackRoundsLeavesEverythingToTheOwner() throws IOException {
        TestJob job = new TestJob(4, Runnable::run);
        job.backToBack = true; // a helper run by the owner itself must not wait for a next round
        for (int round = 0; round < 50; round++) {
            job.start(6, 3);
            job.await(job);
        }
        assertEquals(300, job.ran.get());
        assertEquals(Set.of(Thread.currentThread().getName()), job.threads);
    }

    @Test
    void aHelperGoesBackToItsExecutorAfterAtMost64Rounds() throws Exception {
        AtomicInteger tasks = new AtomicInteger();
        ExecutorService one = Executors.newSingleThreadExecutor();
        try {
            TestJob job = new TestJob(1, task -> {
                tasks.incrementAndGet();
                one.execute(task);
            });
            job.backToBack = true;
            AtomicReference<CountDownLatch> bothRunning = new AtomicReference<>();
            job.body = part -> { // every round needs the helper: its two parts wait for each other
                bothRunning.get().countDown();
                awaitOrFail(bothRunning.get(), "no helper took part " + (1 - part));
            };
            for (int round = 0; round < 200; round++) {
                bothRunning.set(new CountDownLatch(2));
                job.start(2, 1);
                job.await(job);
            }
            job.shutdown();
            assertTrue(tasks.get() >= 4, "200 rounds need at least 4 helper tasks of 64 rounds each: " + tasks.get());
        } finally {
            one.shutdownNow();
        }
    }

    @Test
    void requestsDoNotPileUpInABusyExecutor() throws IOException {
        List<Runnable> queued = new ArrayList<>();
        TestJob job = new TestJob(4, queued::add); // an executor that never runs anything
        for (int round = 0; round < 100; round++) {
            job.start(8, 3);
            job.await(job);
        }
        assertEquals(3, queued.size(), "one request per helper a round asks for, not one per round");
        queued.forEach(Runnable::run); // late helpers find their rounds finished
        assertEquals(800, job.ran.get());
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
        return b.append("\nlive: ").append(Workers.liveThreads()).toString();
    }

    @Test
    void theOwnerFinishesAloneWhenNoWorkerHelps() throws IOException {
        TestJob job = new TestJob(0); // helpers get no resource, so they cannot help
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
