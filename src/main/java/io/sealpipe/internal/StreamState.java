package io.sealpipe.internal;

import io.sealpipe.Abortable;
import io.sealpipe.StreamAuthenticationException;
import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;

/**
 * Whether a stream is open, has failed, was abandoned or is closed: the one mechanism behind
 * every stream class's checks, failures and {@code close()}.
 *
 * <p>A stream checks before each operation ({@link #check()}), records anything an operation
 * throws ({@code catch (Throwable t) { throw state.fail(t); }}), and starts {@code close()} with
 * {@code if (!state.close()) return;}. After a failure every later call rethrows it, and a writing
 * stream's close releases everything without ending its message: a failure of any kind, an
 * {@link Error} included, can never turn into a shorter message that a reader accepts.
 *
 * <p>The state is readable from any thread (positioned reads check it); it changes on the
 * stream's own thread, or once in {@code close()}.
 */
public final class StreamState {
    private final String operation;
    private volatile boolean closed;
    private volatile boolean aborted;
    private volatile Throwable failure;

    /**
     * @param operation what the stream does, for the message of an unchecked failure:
     *     "encryption", "decryption", "compression", "decompression"
     */
    public StreamState(String operation) {
        this.operation = operation;
    }

    public boolean isOpen() {
        return !closed;
    }

    /** Whether an operation failed, or the stream was abandoned: its output must not be finished. */
    public boolean failedOrAborted() {
        return failure != null || aborted;
    }

    /** Throws {@link ClosedChannelException} once the stream is closed. */
    public void checkOpen() throws ClosedChannelException {
        if (closed) {
            throw new ClosedChannelException();
        }
    }

    /**
     * Throws once the stream is closed, and after a failure throws it again: a {@link
     * StreamAuthenticationException} as itself (same message and chunk), anything else as an
     * {@link IOException} that says the stream cannot continue.
     */
    public void check() throws IOException {
        checkOpen();
        Throwable f = failure;
        if (f instanceof StreamAuthenticationException a) {
            throw new StreamAuthenticationException(a.getMessage(), a.chunk(), a); // the same failure, again
        }
        if (f != null) {
            throw new IOException("the stream failed earlier and cannot continue: " + f.getMessage(), f);
        }
    }

    /**
     * Records the first failure of the stream and returns what to throw: an {@link IOException}
     * as it is, an unchecked exception wrapped in one. An {@link Error} is recorded and thrown as
     * it is.
     */
    public IOException fail(Throwable t) {
        if (failure == null) {
            failure = t;
        }
        if (t instanceof IOException io) {
            return io;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IOException(operation + " failed: " + t.getMessage(), t);
    }

    /** Runs one step of the stream's work, recording its failure as {@link #fail} does. */
    public void run(Closer.Step step) throws IOException {
        try {
            step.run();
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    /**
     * {@code abort()} of a writing stream: marks it abandoned, so that its {@code close()} does
     * not finish the output, and closes it, throwing no exception (see {@link Abortable#abort()}).
     */
    public void abandon(Closeable stream) {
        aborted = true;
        try {
            stream.close();
        } catch (IOException | RuntimeException e) {
            // Released anyway, and the output is abandoned: a failure here changes nothing.
        }
    }

    /**
     * What {@code close()} of a writing stream throws after a failure, or null: the output was
     * not finished because of it. Null after {@link #abort()} without a failure (the caller
     * chose that).
     */
    public IOException unfinished(String what) {
        Throwable f = failure;
        return f == null ? null : new IOException(what + " was not finished: " + f.getMessage(), f);
    }

    /** Marks the stream closed; false if it already was (close is idempotent). */
    public synchronized boolean close() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }
}
