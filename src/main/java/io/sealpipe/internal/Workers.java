package io.sealpipe.internal;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads that help streams whose parallelism is above 1: one small pool shared by every
 * stream, of daemon threads named {@code sealpipe-worker-N}, at most {@link #MAX_THREADS}, each
 * started when first needed and ending after {@link #KEEP_ALIVE_MILLIS} without work.
 *
 * <p>A worker only ever helps with a {@link ParallelJob} whose owner can finish every part of it
 * alone, so a busy pool slows streams down but never blocks one, and no stream owns a thread:
 * when a stream is closed its jobs are finished and the workers go back to waiting. Handing a
 * job to a worker allocates nothing: each worker has a mailbox for one job.
 */
public final class Workers {
    /** The most threads the pool runs: the available processors, at least 1 and at most 16. */
    public static final int MAX_THREADS = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), 16));

    /** How long an idle worker waits for a job before it ends. */
    public static final long KEEP_ALIVE_MILLIS = 2000;

    /**
     * How long a worker that just finished a job spins for the next before it parks: a stream
     * hands out its next round within microseconds, and waking a parked thread costs tens of
     * microseconds, a good part of a round.
     */
    static final long SPIN_NANOS = 200_000;

    /** The thread name prefix, for tests and thread dumps. */
    public static final String THREAD_NAME_PREFIX = "sealpipe-worker-";

    private static final AtomicReferenceArray<Worker> WORKERS = new AtomicReferenceArray<>(MAX_THREADS);

    /**
     * Jobs offered when every worker was busy: a worker that finishes its job takes the next
     * from here before it waits. Fixed slots, so handing over allocates nothing; when all are
     * taken the offer is dropped (the job's owner does the work). An entry may outlive its
     * round: a worker then finds nothing left to do in it and moves on.
     */
    private static final AtomicReferenceArray<ParallelJob<?>> PENDING = new AtomicReferenceArray<>(64);

    private Workers() {}

    /** Asks up to {@code helpers} idle workers to help with {@code job}; returns how many took it. */
    static int offer(ParallelJob<?> job, int helpers) {
        int given = 0;
        for (int i = 0; i < MAX_THREADS && given < helpers; i++) {
            Worker w = WORKERS.get(i);
            if (w != null && w.tryAssign(job)) {
                given++;
            } else if ((w == null || w.isDead()) && start(i, w, job)) {
                given++;
            }
        }
        for (int i = given; i < helpers && i < MAX_THREADS; i++) {
            if (!enqueue(job)) {
                break;
            }
        }
        return given;
    }

    private static boolean enqueue(ParallelJob<?> job) {
        for (int i = 0; i < PENDING.length(); i++) {
            if (PENDING.get(i) == null && PENDING.compareAndSet(i, null, job)) {
                return true;
            }
        }
        return false;
    }

    private static ParallelJob<?> poll() {
        for (int i = 0; i < PENDING.length(); i++) {
            ParallelJob<?> j = PENDING.get(i);
            if (j != null && PENDING.compareAndSet(i, j, null)) {
                return j;
            }
        }
        return null;
    }

    /** Starts a worker in slot {@code i} (replacing {@code old}) with its first job. */
    private static boolean start(int i, Worker old, ParallelJob<?> job) {
        Worker w = new Worker(i, job);
        if (!WORKERS.compareAndSet(i, old, w)) {
            return false; // another stream started one there first
        }
        w.thread.start();
        return true;
    }

    /** Workers alive now (started and not ended), for tests. */
    public static int liveThreads() {
        int n = 0;
        for (int i = 0; i < MAX_THREADS; i++) {
            Worker w = WORKERS.get(i);
            if (w != null && !w.isDead()) {
                n++;
            }
        }
        return n;
    }

    private static final class Worker implements Runnable {
        private static final int IDLE = 0;
        private static final int ASSIGNED = 1;
        private static final int DEAD = 2;

        private final AtomicInteger state = new AtomicInteger(ASSIGNED);
        private volatile ParallelJob<?> job;
        final Thread thread;

        Worker(int index, ParallelJob<?> first) {
            this.job = first;
            this.thread = new Thread(this, THREAD_NAME_PREFIX + index);
            thread.setDaemon(true);
        }

        boolean isDead() {
            return state.get() == DEAD;
        }

        boolean tryAssign(ParallelJob<?> j) {
            if (!state.compareAndSet(IDLE, ASSIGNED)) {
                return false;
            }
            job = j;
            LockSupport.unpark(thread);
            return true;
        }

        @Override
        public void run() {
            long idleSince = System.nanoTime();
            while (true) {
                ParallelJob<?> j = job;
                if (j != null) {
                    job = null;
                    try {
                        for (; j != null; j = poll()) { // then the jobs offered while every worker was busy
                            j.help();
                        }
                    } finally {
                        state.set(IDLE); // even after an Error: the slot must not stay taken
                    }
                    idleSince = System.nanoTime();
                    ParallelJob<?> late = poll(); // offered between the last poll and IDLE
                    if (late != null) {
                        if (state.compareAndSet(IDLE, ASSIGNED)) {
                            job = late;
                        } else {
                            enqueue(late); // a job was just assigned here: leave this one to another
                        }
                    }
                } else if (state.get() == ASSIGNED) {
                    Thread.onSpinWait(); // assigned: the job is being put in the mailbox
                } else if (System.nanoTime() - idleSince < SPIN_NANOS) {
                    Thread.onSpinWait(); // a stream's next round comes soon: wait for it awake
                } else if (System.nanoTime() - idleSince >= KEEP_ALIVE_MILLIS * 1_000_000L) {
                    if (state.compareAndSet(IDLE, DEAD)) {
                        return;
                    }
                } else {
                    LockSupport.parkNanos(this, KEEP_ALIVE_MILLIS * 1_000_000L);
                }
            }
        }
    }
}
