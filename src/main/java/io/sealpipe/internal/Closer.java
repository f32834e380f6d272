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
        } catch (IOException | RuntimeException e) {
            if (first == null) {
                first = e;
            } else if (first != e) {
                first.addSuppressed(e);
            }
        }
        return this;
    }

    /** Throws the first failure, if any. */
    public void rethrow() throws IOException {
        if (first instanceof IOException io) {
            throw io;
        }
        if (first != null) {
            throw (RuntimeException) first;
        }
    }
}
