package io.sealpipe.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that help streams whose parallelism is above 1 when the application gave them no
 * executor of its own: one {@link ThreadPoolExecutor} shared by every stream, of daemon threads
 * named {@code sealpipe-worker-N}, at most {@link #MAX_THREADS}, each started when first needed
 * and ending after {@link #KEEP_ALIVE_MILLIS} without work.
 *
 * <p>A worker only ever helps with a {@link ParallelJob} whose owner can finish every part of it
 * alone, so a busy pool slows streams down but never blocks one, and no stream keeps a thread
 * for long (a helper returns to the pool after at most 64 rounds).
 * Idle workers wait in the executor's queue, parked, using no CPU (a helper stays awake for a
 * moment after a round of a stream being written: see {@link ParallelJob}).
 */
public final class Workers {
    /** The most threads the pool runs: the available processors, at least 1 and at most 16. */
    public static final int MAX_THREADS = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), 16));

    /** How long an idle worker waits for a job before it ends. */
    public static final long KEEP_ALIVE_MILLIS = 2000;

    /** The thread name prefix, for tests and thread dumps. */
    public static final String THREAD_NAME_PREFIX = "sealpipe-worker-";

    private static final ThreadPoolExecutor POOL = newPool();

    private Workers() {}

    private static ThreadPoolExecutor newPool() {
        AtomicInteger next = new AtomicInteger();
        ThreadFactory factory = task -> {
            Thread t = new Thread(task, THREAD_NAME_PREFIX + next.getAndIncrement());
            t.setDaemon(true);
            return t;
        };
        // Core size = maximum with an unbounded queue: a thread is started per task until there
        // are MAX_THREADS, and all of them time out when idle. The queue never holds more than
        // the helpers the live jobs asked for (ParallelJob keeps one request per helper).
        ThreadPoolExecutor pool = new ThreadPoolExecutor(MAX_THREADS, MAX_THREADS, KEEP_ALIVE_MILLIS,
                TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), factory);
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** The shared pool, for streams built without {@code executor(...)}. */
    public static Executor shared() {
        return POOL;
    }

    /** Workers alive now (started and not ended), for tests. */
    public static int liveThreads() {
        return POOL.getPoolSize();
    }

    /**
     * The most workers that were ever alive at once in this JVM, for tests (the soak's check of
     * {@link #MAX_THREADS}).
     */
    public static int largestThreads() {
        return POOL.getLargestPoolSize();
    }
}
