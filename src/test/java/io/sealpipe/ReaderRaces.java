package io.sealpipe;

import java.util.concurrent.atomic.AtomicReference;

/** Steps the race tests place at exact points of another thread's work. */
final class ReaderRaces {
    private ReaderRaces() {}

    /** Closes {@code closeable} on a thread of its own and waits for it: close() runs whole, right here. */
    static void closeOnAnotherThread(AutoCloseable closeable) {
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

    /**
     * Waits until {@code other} (started) has finished or is blocked entering a monitor. Used where
     * a correct reader must block on a lock this thread holds, and a broken one runs through: the
     * condition is a state of {@code other}, not a time, so the outcome does not depend on
     * scheduling. (A thread also shows BLOCKED briefly on a class-loading monitor; the tests warm
     * up first, and such a pause could only hide the bug, never fail a correct reader.)
     */
    static void awaitFinishedOrBlocked(Thread other) {
        while (other.isAlive() && other.getState() != Thread.State.BLOCKED) {
            Thread.onSpinWait();
        }
    }

    static void joinUninterruptibly(Thread thread) {
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
