package io.sealpipe;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/** Steps the race tests place at exact points of another thread's work. */
public final class ReaderRaces {
    private ReaderRaces() {}

    /** Closes {@code closeable} on a thread of its own and waits for it: close() runs whole, right here. */
    public static void closeOnAnotherThread(AutoCloseable closeable) {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread closer = new Thread(() -> {
            try {
                closeable.close();
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "closer");
        closer.start();
        joinUninterruptibly(closer);
        if (failure.get() != null) {
            throw new AssertionError("close() failed", failure.get());
        }
    }

    /** A close() running on a thread of its own, started by {@link #startClose}. */
    public static final class Closing {
        private final Thread thread;
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        private Closing(AutoCloseable closeable) {
            thread = new Thread(() -> {
                try {
                    closeable.close();
                } catch (Throwable t) {
                    failure.set(t);
                }
            }, "closer");
        }

        /** Waits for close() to end; throws if it failed. */
        public void join() {
            joinUninterruptibly(thread);
            if (failure.get() != null) {
                throw new AssertionError("close() failed", failure.get());
            }
        }
    }

    /**
     * Starts close() of {@code closeable} on a thread of its own and returns once close() has
     * ended or {@code waits} says it waits for the calling thread (which holds a lock close()
     * needs): for a hook inside a step that close() may have to wait for, where {@link
     * #closeOnAnotherThread} would never return. It spins on those two states, never on time.
     */
    public static Closing startClose(AutoCloseable closeable, Predicate<Thread> waits) {
        Closing closing = new Closing(closeable);
        closing.thread.start();
        while (closing.thread.isAlive() && !waits.test(closing.thread)) {
            Thread.onSpinWait();
        }
        return closing;
    }

    /**
     * For {@link #startClose}: whether {@code closer} waits to enter a monitor (a synchronized
     * close() of a channel).
     */
    public static boolean blocked(Thread closer) {
        return closer.getState() == Thread.State.BLOCKED;
    }

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
