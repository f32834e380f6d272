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
