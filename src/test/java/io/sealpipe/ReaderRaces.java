package io.sealpipe;

import java.util.function.Predicate;

/** Steps the race tests place at exact points of another thread's work. */
public final class ReaderRaces {
    private ReaderRaces() {}

    /** Closes {@code closeable} on a thread of its own and waits for it: close() runs whole, right here. */
    public static void closeOnAnotherThread(AutoCloseable closeable) {
        OtherThread.run("closer", "close()", closeable::close);
    }

    /** A close() running on a thread of its own, started by {@link #startClose}. */
    public static final class Closing {
        private final OtherThread closer;

        private Closing(OtherThread closer) {
            this.closer = closer;
        }

        /** Waits for close() to end; throws if it failed. */
        public void join() {
            closer.join();
        }
    }

    /**
     * Starts close() of {@code closeable} on a thread of its own and returns once close() has
     * ended or {@code waits} says it waits for the calling thread (which holds a lock close()
     * needs): for a hook inside a step that close() may have to wait for, where {@link
     * #closeOnAnotherThread} would never return. It spins on those two states, never on time.
     */
    public static Closing startClose(AutoCloseable closeable, Predicate<Thread> waits) {
        OtherThread closer = OtherThread.start("closer", "close()", closeable::close);
        while (closer.thread().isAlive() && !waits.test(closer.thread())) {
            Thread.onSpinWait();
        }
        return new Closing(closer);
    }

    /**
     * For {@link #startClose}: whether {@code closer} waits to enter a monitor (a synchronized
     * close() of a channel).
     */
    public static boolean blocked(Thread closer) {
        return closer.getState() == Thread.State.BLOCKED;
    }
}
