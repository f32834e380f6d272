package io.sealpipe.internal;

import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A piece of a stream's work split into independent parts (chunks to seal, frames to compress),
 * run by the stream's own thread and by helper tasks on an {@link Executor} (the application's,
 * or the shared {@link Workers}). One object is reused for round after round.
 *
 * <p>{@link #start} begins a round and asks for helpers; {@link #await} has the calling
 * thread take every part nobody has taken yet, then waits for the parts that workers are still
 * running, and rethrows the first failure. Because the owner can always finish alone, a job
 * never waits for a free worker. Each runner may need a resource of its own (a cipher context):
 * the owner passes its own to {@code await}; a worker takes one from the job's pool and does not
 * help if none is free. Jobs whose parts need none have no pool and get null.
 *
 * <p>A helper task that runs late finds its round finished and returns at once, or helps with
 * the round in progress then. The job keeps at most as many helper tasks in the executor (queued
 * or running) as one round asks for, so a busy executor never piles up requests, and one that
 * rejects a task only means the owner does more of the work.
 *
 * <p>Waiting is bounded. Handing work to a parked thread costs tens of microseconds (about 45 µs
 * on the project's virtual machines), as much as sealing a few chunks, and a stream starts its
 * rounds microseconds apart while it is written. So a helper that finished a round of a job
 * whose {@linkplain #roundsFollowEachOther() rounds follow each other} stays with it, yielding
 * to any thread that has work, for at most {@link #HELPER_LINGER_NANOS} for the owner's next
 * round before it goes back to its executor, and the owner waits awake at most {@link
 * #OWNER_SPIN_NANOS} for parts that helpers are finishing before it parks. Neither happens at
 * parallelism 1 (no helpers), after {@link #shutdown()}, or when the stream pauses: an idle
 * stream costs no CPU.
 *
 * <p>Rounds do not overlap: the owner starts the next round only after {@code await} (or
 * {@link #cancelAndWait()}) of the previous one returned. Not for use by several owners at once.
 *
 * @param <R> what a runner needs for itself, such as a cipher context
 */
public abstract class ParallelJob<R> {
    /** The longest the owner waits awake for parts that helpers are finishing, before it parks. */
    static final long OWNER_SPIN_NANOS = 50_000;

    /** The longest a helper that finished a round waits awake for the owner's next one. */
    static final long HELPER_LINGER_NANOS = 100_000;

    /**
     * The most rounds one helper task stays for before it goes back to its executor (the owner
     * then asks again), so that a stream written without pause does not keep a thread that other
     * streams' tasks wait for.
     */
    static final int MAX_ROUNDS_PER_HELPER = 64;

    /** The round's part count (high 32 bits) and the next part to take (low 32 bits). */
    private final AtomicLong parts = new AtomicLong();
    private final AtomicInteger done = new AtomicInteger();
    private final AtomicInteger helping = new AtomicInteger();
    /** Helper tasks handed to the executor and not yet finished (queued, or running and lingering). */
    private final AtomicInteger requested = new AtomicInteger();
    /** The thread that started the last round: a helper run by it (an inline executor) never lingers. */
    private volatile Thread owner;
    private volatile int count;
    private volatile Throwable failure;
    private volatile boolean cancelled;
    private volatile Thread waiter;
    private volatile Thread closer;
    private boolean started;
    /** Counts rounds, so that a helper sees the owner start the next one. */
    private volatile int round;
    private volatile boolean shut;
    private final ResourcePool<R> helperResources;
    private final Executor executor;
    private final Runnable helper = this::runHelper;

    /**
     * @param helperResources what helpers run parts with, or null if parts need nothing
     * @param executor where helper tasks run
     */
    protected ParallelJob(ResourcePool<R> helperResources, Executor executor) {
        this.helperResources = helperResources;
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    /**
     * Whether the owner starts this job's rounds back to back (a stream's chunk rounds), so that
     * a helper should wait a moment for the next one; false (the default) for jobs that come
     * round again only after many others (a ring of frames), whose helpers leave at once.
     */
    protected boolean roundsFollowEachOther() {
        return false;
    }

    /** Runs part {@code part} of the round with a runner's own resource (null if the job has no pool). */
    protected abstract void runPart(int part, R resource) throws Exception;

    /** Begins a round of {@code partCount} parts and asks for up to {@code helpers} helpers. */
    public final void start(int partCount, int helpers) {
        if (started) {
            throw new IllegalStateException("the previous round was not awaited");
        }
        started = true;
        failure = null;
        cancelled = false;
        count = partCount;
        done.set(0);
        owner = Thread.currentThread();
        parts.set((long) partCount << 32); // publishes the round: helpers may take parts from here on
        round++;
        if (helpers > 0) {
            requestHelpers(Math.min(helpers, partCount));
        }
    }

    /**
     * Hands helper tasks to the executor until {@code wanted} are there (tasks of earlier rounds
     * still queued or lingering count: they will help with this one).
     */
    private void requestHelpers(int wanted) {
        // Only the owner adds requests here; helpers leaving meanwhile only make the count
        // smaller. Bounded by wanted, so an executor that runs tasks in the calling thread is fine.
        int missing = wanted - requested.get();
        for (int i = 0; i < missing && requestOne(); i++) {
            // one more helper task is queued or running
        }
    }

    /**
     * Hands one helper task to the executor; false if it would not take it (a saturated or
     * shut-down executor's RejectedExecutionException, another unchecked exception, or an
     * OutOfMemoryError when it cannot start a thread): no help this time,
     * the owner does the work.
     */
    private boolean requestOne() {
        requested.incrementAndGet();
        try {
            executor.execute(helper);
            return true;
        } catch (RuntimeException | OutOfMemoryError e) {
            // OutOfMemoryError: "unable to create native thread". (A ThreadPoolExecutor may have
            // queued the task before its thread failed to start; if a later thread runs it, the
            // count ends one too low and a round asks for one helper more: harmless.)
            requested.decrementAndGet();
            return false;
        }
    }

    /**
     * What a helper task does: helps with the round in progress and then, while the owner keeps
     * starting rounds within {@link #HELPER_LINGER_NANOS} of each other, with the next ones; it
     * counts as requested until it leaves, so the owner does not ask for another meanwhile.
     */
    private void runHelper() {
        try {
            int seen;
            int rounds = 0;
            do {
                seen = round;
                help(seen);
            } while (++rounds < MAX_ROUNDS_PER_HELPER && nextRoundStarts(seen));
        } finally {
            requested.decrementAndGet();
        }
        // The owner may have started a round while this task was leaving, and not asked for a
        // helper because it still counted this one: ask for it now, at the back of the queue.
        if (!shut && !nothingLeft() && requested.get() == 0) {
            requestOne();
        }
    }

    /**
     * Waits awake, giving way to any thread that has work, for the owner to start the round after
     * {@code seen}: true if it did, false after {@link #HELPER_LINGER_NANOS} or at shutdown. A
     * stream starts its rounds microseconds apart while it is being written, and handing the
     * next round to a parked thread instead costs tens of microseconds each time (measured in
     * docs/PERFORMANCE.md).
     */
    private boolean nextRoundStarts(int seen) {
        if (!roundsFollowEachOther() || Thread.currentThread() == owner) {
            return false; // an inline executor: the owner itself is the helper, and no round can start meanwhile
        }
        long until = System.nanoTime() + HELPER_LINGER_NANOS;
        while (round == seen) {
            if (shut || System.nanoTime() - until >= 0) {
                return false;
            }
            Thread.yield();
        }
        return true;
    }

    /** Whether every part of the round in progress has finished (true if none is). */
    public final boolean isDone() {
        return !started || done.get() >= count;
    }

    /** Whether a round was started and not yet awaited. */
    public final boolean inProgress() {
        return started;
    }

    /**
     * Runs the parts nobody took yet with {@code own}, waits for the rest, and rethrows the first
     * failure of the round (IOException and unchecked ones as they are, others wrapped).
     */
    public final void await(R own) throws IOException {
        finish(own);
        Throwable f = failure;
        if (f instanceof IOException io) {
            throw io;
        }
        if (f instanceof RuntimeException r) {
            throw r;
        }
        if (f instanceof Error e) {
            throw e;
        }
        if (f != null) {
            throw new IOException(f.getMessage(), f);
        }
    }

    /**
     * Runs the parts nobody took yet with {@code own}, without waiting for those that workers
     * run; failures are kept for {@link #await}. For an owner that would otherwise wait for an
     * earlier job while this one has work left.
     */
    public final void helpNow(R own) {
        if (started) {
            work(own, false, 0);
        }
    }

    /**
     * Skips the parts nobody took yet and waits for those running (for close after a failure);
     * returns the round's first failure, or null. Does nothing if no round is in progress.
     */
    public final Throwable cancelAndWait() {
        if (!started) {
            return null;
        }
        cancelled = true;
        finish(null);
        return failure;
    }

    /**
     * {@link #cancelAndWait()}, then waits until no worker holds a resource of this job any more:
     * after it returns every acquired resource was released, and the owner may free them.
     */
    public final Throwable shutdown() {
        shut = true; // lingering helpers leave
        Throwable f = cancelAndWait();
        // A helper may still be leaving help() (it takes no part of a finished round): wait for it.
        closer = Thread.currentThread();
        while (helping.get() > 0) {
            LockSupport.park(this);
        }
        closer = null;
        return f;
    }

    private void finish(R own) {
        if (!started) {
            throw new IllegalStateException("no round was started");
        }
        waiter = Thread.currentThread();
        work(own, false, 0);
        long spinUntil = System.nanoTime() + OWNER_SPIN_NANOS;
        while (done.get() < count) {
            // Only parts that helpers are running are left, and each ends within a part's time
            // (tens of microseconds), about what waking from park costs: wait awake that long
            // at most, then park until the helper that finishes the last part unparks us.
            if (System.nanoTime() - spinUntil < 0) {
                Thread.onSpinWait();
            } else {
                LockSupport.park(this);
            }
        }
        waiter = null;
        started = false;
    }

    /**
     * Runs parts of round {@code onlyRound} if it is in progress and has parts left; a helper
     * task's work for one round (the task decides whether to stay for the next).
     */
    final void help(int onlyRound) {
        helping.incrementAndGet();
        try {
            if (nothingLeft()) {
                return;
            }
            if (helperResources == null) {
                work(null, true, onlyRound);
                return;
            }
            R r = helperResources.take();
            if (r == null) {
                return; // every resource is lent: the owner and the other helpers do the parts
            }
            try {
                work(r, true, onlyRound);
            } finally {
                helperResources.give(r);
            }
        } finally {
            if (helping.decrementAndGet() == 0) {
                Thread c = closer;
                if (c != null) {
                    LockSupport.unpark(c);
                }
            }
        }
    }

    private boolean nothingLeft() {
        long p = parts.get();
        return (int) p >= (int) (p >>> 32);
    }

    /** Takes and runs parts until none are left (for a helper: of round {@code onlyRound} only). */
    private void work(R resource, boolean helper, int onlyRound) {
        while (true) {
            if (helper && round != onlyRound) {
                return; // the owner started another round: the helper task counts rounds
            }
            long p = parts.get();
            int next = (int) p;
            int total = (int) (p >>> 32);
            if (next >= total) {
                return;
            }
            if (!parts.compareAndSet(p, p + 1)) {
                continue;
            }
            try {
                if (!cancelled && failure == null) {
                    runPart(next, resource);
                }
            } catch (Throwable t) {
                synchronized (this) {
                    if (failure == null) {
                        failure = t;
                    }
                }
            } finally {
                if (done.incrementAndGet() == total) {
                    Thread w = waiter;
                    if (w != null) {
                        LockSupport.unpark(w);
                    }
                }
            }
        }
    }
}
