package io.sealpipe.internal;

import java.io.IOException;

/**
 * Runs every release step of a {@code close()} even when one fails, then rethrows the first
 * failure with the later ones attached as suppressed (as Okio's {@code CipherSink.close}).
 */
public final class Closer {
    /** One step; may throw. */
    public interface Step {
        void run() throws IOException;
    }

    private Throwable first;

    /** Runs the step, keeping its failure. */
    public Closer run(Step step) {
        try {
            step.run();
        } catch (Throwable e) { // IOException, unchecked, or an Error: the later steps run all the same
            if (first == null) {
                first = e;
            } else if (first != e) {
                first.addSuppressed(e);
            }
        }
        return this;
    }

    /** Keeps {@code failure} as if a step had thrown it; does nothing for null. */
    public Closer fail(IOException failure) {
        if (failure != null) {
            run(() -> {
                throw failure;
            });
        }
        return this;
    }

    /**
     * Closes each of {@code resources} after {@code failure} (made, but not yet where a close()
     * would reach them), adding what a close throws to {@code failure} as suppressed; then
     * {@code failure} is the caller's to throw.
     */
    public static void closeAfter(Throwable failure, Iterable<? extends AutoCloseable> resources) {
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Throwable e) { // IOException, unchecked, or an Error: the others are closed all the same
                failure.addSuppressed(e);
            }
        }
    }

    /** Throws the first failure, if any. */
    public void rethrow() throws IOException {
        if (first instanceof IOException io) {
            throw io;
        }
        if (first instanceof Error e) {
            throw e;
        }
        if (first != null) {
            throw (RuntimeException) first;
        }
    }
}
