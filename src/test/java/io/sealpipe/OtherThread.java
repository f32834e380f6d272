package io.sealpipe;

import java.util.concurrent.atomic.AtomicReference;

/**
 * A step run on a thread of its own, for the tests that place one thread's work at an exact point
 * of another's: start it, join it (never by time unless asked), and get what it threw.
 */
public final class OtherThread {
    /** What the other thread runs. */
    @FunctionalInterface
    public interface Step {
        void run() throws Exception;
    }

    private final Thread thread;
    private final String what;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private OtherThread(String name, String what, Step step) {
        this.what = what;
        this.thread = new Thread(() -> {
            try {
                step.run();
            } catch (Throwable t) {
                failure.set(t);
            }
        }, name);
    }

    /** Starts {@code step} on a new thread named {@code name}; {@code what} names it in failures. */
    public static OtherThread start(String name, String what, Step step) {
        OtherThread other = new OtherThread(name, what, step);
        other.thread.start();
        return other;
    }

    /** Runs {@code step} whole on a new thread and waits for it; rethrows what it threw. */
    public static void run(String name, String what, Step step) {
        start(name, what, step).join();
    }

    /** Waits for the step to end; throws an AssertionError with its failure if it threw. */
    public void join() {
        awaitEnd();
        if (failure.get() != null) {
            throw new AssertionError(what + " failed", failure.get());
        }
    }

    /** Waits for the step to end and returns what it threw, or null: for steps that must fail. */
    public Throwable awaitFailure() {
        awaitEnd();
        return failure.get();
    }

    /** The thread, e.g. to see whether it is blocked or where it is. */
    public Thread thread() {
        return thread;
    }

    private void awaitEnd() {
        joinUninterruptibly(thread);
    }

    /** Waits for {@code thread} to end, however often this thread is interrupted meanwhile. */
    public static void joinUninterruptibly(Thread thread) {
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
