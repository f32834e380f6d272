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
 * job over allocates nothing: each worker has a mailbox for one job, and jobs offered while no
 * worker was free wait in a fixed table that workers look at before they rest.
 *
 * <p>A stream hands out its next round within microseconds of the last, while waking a parked
 * thread takes tens of microseconds, so a worker that finished a job stays awake for
 * {@link #SPIN_NANOS} and offers go to awake workers first.
 */
public final class Workers {
    /** The most threads the pool runs: the available processors, at least 1 and at most 16. */
    public static final int MAX_THREADS = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), 16));

    /** How long an idle worker waits for a job before it ends. */
    public static final long KEEP_ALIVE_MILLIS = 2000;

    /** How long a worker that finished a job stays awake for the next before it parks. */
    static final long SPIN_NANOS = 200_000;

    /** The thread name prefix, for tests and thread dumps. */
    public static final String THREAD_NAME_PREFIX = "sealpipe-worker-";

    private static final AtomicReferenceArray<Worker> WORKERS = new AtomicReferenceArray<>(MAX_THREADS);

    /**
     * Jobs offered when no worker was free: a worker takes them from here after its job and
     * while it waits. Fixed slots, so offering allocates nothing; when all are taken the offer
     * is dropped (the job's owner does the work). An entry may outlive its round: a worker then
     * finds nothing left to do in it and moves on.
     */
    private static final AtomicReferenceArray<ParallelJob<?>> PENDING = new AtomicReferenceArray<>(64);

    private Workers() {}

    /** Asks up to {@code helpers} workers to help with {@code job}; returns how many took it at once. */
    static int offer(ParallelJob<?> job, int helpers) {
        int given = 0;
        // Awake idle workers first: they start within a microsecond.
        for (int i = 0; i < MAX_THREADS && given < helpers; i++) {
            Worker w = WORKERS.get(i);
            if (w != null && !w.parked && w.tryAssign(job)) {
                given++;
            }
        }
        if (given == helpers) {
            return given;
        }
        // The rest wait in the table for a worker that finishes its job, and parked or new
        // workers are woken to look there.
        int missing = helpers - given;
        int queued = 0;
        while (queued < missing && enqueue(job)) {
            queued++;
        }
        int woken = 0;
        for (int i = 0; i < MAX_THREADS && woken < queued; i++) {
            Worker w = WORKERS.get(i);
            if (w == null || w.isDead()) {
                if (start(i, w)) {
                    woken++;
                }
            } else if (w.parked) {
                LockSupport.unpark(w.thread);
                woken++;
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

    /** Starts a worker in slot {@code i} (replacing {@code old}); it looks for pending jobs first. */
    private static boolean start(int i, Worker old) {
        Worker w = new Worker(i);
        if (!WORKERS.compareAndSet(i, old, w)) {
            return false; // another stream started one there first
        }
        w.thread.start();
        return true;
    }

    /** Jobs waiting in the table of pending jobs, for tests. */
    static int pendingJobs() {
        int n = 0;
        for (int i = 0; i < PENDING.length(); i++) {
            if (PENDING.get(i) != null) {
                n++;
            }
        }
        return n;
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

        private final AtomicInteger state = new AtomicInteger(IDLE);
        private volatile ParallelJob<?> job;
        volatile boolean parked;
        final Thread thread;

        Worker(int index) {
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
            int spins = 0;
            while (true) {
                ParallelJob<?> j = job;
                if (j != null) {
                    job = null;
                    runAll(j);
                    idleSince = System.nanoTime();
                } else if (state.get() == ASSIGNED) {
                    Thread.onSpinWait(); // assigned: the job is being put in the mailbox
                } else if ((++spins & 63) == 0 && (j = poll()) != null) {
                    if (state.compareAndSet(IDLE, ASSIGNED)) {
                        runAll(j);
                        idleSince = System.nanoTime();
                    } else {
                        enqueue(j); // a job was just assigned here: leave this one to another worker
                    }
                } else if (System.nanoTime() - idleSince < SPIN_NANOS) {
                    Thread.yield(); // awake for the next round, but giving way to threads that have work
                } else if (System.nanoTime() - idleSince >= KEEP_ALIVE_MILLIS * 1_000_000L) {
                    if (state.compareAndSet(IDLE, DEAD)) {
                        return;
                    }
                } else {
                    // Say "parked" first, then look at the table once more: an offer either sees
                    // the flag and wakes this thread, or put its job in the table before this look.
                    parked = true;
                    ParallelJob<?> late = poll();
                    if (late != null) {
                        parked = false;
                        if (state.compareAndSet(IDLE, ASSIGNED)) {
                            runAll(late);
                            idleSince = System.nanoTime();
                        } else {
                            enqueue(late);
                        }
                        continue;
                    }
                    if (job == null && state.get() == IDLE) {
                        LockSupport.parkNanos(this, KEEP_ALIVE_MILLIS * 1_000_000L);
                    }
                    parked = false;
                    spins = 63; // look at the pending jobs at once
                }
            }
        }

        /** Runs {@code j}, then every pending job, then becomes idle (also after an Error). */
        private void runAll(ParallelJob<?> j) {
            try {
                for (; j != null; j = poll()) {
                    j.help();
                }
            } finally {
                state.set(IDLE);
            }
        }
    }
}
