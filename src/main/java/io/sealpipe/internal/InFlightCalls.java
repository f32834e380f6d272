package io.sealpipe.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the calls running on an engine object so that {@code close()} from another thread never
 * frees the engine's context under a running call (for the OpenSSL engines that was a JVM crash).
 * Every public call does {@code enter(); try { ... } finally { leave(); }}. After
 * {@link #close()} no call may enter; the release step runs exactly once, by whoever finishes
 * last: {@code close()} itself when no call is in flight, else the last call to leave.
 */
public final class InFlightCalls {
    /** The sign bit marks closed; the other bits count the calls in flight. */
    private static final int CLOSED = 1 << 31;

    private final String name;
    private final Runnable release;
    private final AtomicInteger state = new AtomicInteger();

    /**
     * @param name the object's name, for "NAME is closed"
     * @param release frees the object's resources; runs once, never while a call is in flight
     */
    public InFlightCalls(String name, Runnable release) {
        this.name = name;
        this.release = release;
    }

    /** Starts a call; throws IllegalStateException if the object is closed. */
    public void enter() {
        while (true) {
            int s = state.get();
            if ((s & CLOSED) != 0) {
                throw new IllegalStateException(name + " is closed");
            }
            if (state.compareAndSet(s, s + 1)) {
                return;
            }
        }
    }

    /** Ends a call started by {@link #enter()}; the last call out of a closed object releases it. */
    public void leave() {
        if (state.decrementAndGet() == CLOSED) {
            release.run();
        }
    }

    /** Refuses new calls and releases now, or when the last call in flight leaves. Idempotent. */
    public void close() {
        while (true) {
            int s = state.get();
            if ((s & CLOSED) != 0) {
                return;
            }
            if (state.compareAndSet(s, s | CLOSED)) {
                if (s == 0) {
                    release.run();
                }
                return;
            }
        }
    }

    public boolean isClosed() {
        return (state.get() & CLOSED) != 0;
    }
}
