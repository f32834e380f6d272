package io.sealpipe.internal;

import java.io.IOException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A fixed ring of reusable jobs that need no resources (frames of a stream): filled and started
 * one after another, finished in the same order, so a stream keeps several in flight and passes
 * their results on in order. The bound on jobs in flight is the stream's back-pressure. Not
 * thread-safe: one owner.
 *
 * @param <J> the job
 */
public final class JobRing<J extends ParallelJob<?>> {
    private final Object[] jobs;
    private final Supplier<J> factory;
    private int oldest;
    private int inFlight;

    /** A ring of {@code size} jobs, each made by {@code factory} when first needed. */
    public JobRing(int size, Supplier<J> factory) {
        this.jobs = new Object[size];
        this.factory = factory;
    }

    public int inFlight() {
        return inFlight;
    }

    public boolean isFull() {
        return inFlight == jobs.length;
    }

    /** The job after those in flight, to be filled and started; the same until {@link #started()}. */
    @SuppressWarnings("unchecked")
    public J next() {
        int i = (oldest + inFlight) % jobs.length;
        if (jobs[i] == null) {
            jobs[i] = factory.get();
        }
        return (J) jobs[i];
    }

    /** Counts the job {@link #next()} returned as in flight (after starting it). */
    public void started() {
        if (isFull()) {
            throw new IllegalStateException("every job is in flight");
        }
        inFlight++;
    }

    /**
     * Waits for the oldest job in flight, which is then no longer in flight, and rethrows its
     * failure. While a worker still runs it, this thread first runs the newest jobs nobody took,
     * rather than wait idle.
     */
    @SuppressWarnings("unchecked")
    public J finishOldest() throws IOException {
        if (inFlight == 0) {
            throw new IllegalStateException("no job in flight");
        }
        J first = (J) jobs[oldest];
        for (int i = inFlight - 1; i > 0 && !first.isDone(); i--) {
            ((J) jobs[(oldest + i) % jobs.length]).helpNow(null);
        }
        oldest = (oldest + 1) % jobs.length;
        inFlight--;
        first.await(null); // runs it here if no worker has taken it
        return first;
    }

    /** Stops every job and waits for the workers still running one (for close). */
    @SuppressWarnings("unchecked")
    public void shutdown() {
        for (Object j : jobs) {
            if (j != null) {
                ((J) j).shutdown();
            }
        }
        inFlight = 0;
    }

    /** Applies {@code action} to every job made so far (to wipe their buffers). */
    @SuppressWarnings("unchecked")
    public void forEach(Consumer<J> action) {
        for (Object j : jobs) {
            if (j != null) {
                action.accept((J) j);
            }
        }
    }
}
