package io.sealpipe.internal.sealed;

import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.gcm.GcmStreams;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The message of one sealed file being written over a wrapped stream: the envelope (if any)
 * first, then a {@link GcmOutputStream} whose sink is the wrapped stream, kept open when the
 * message is sealed. The rules that make a failed writer leave no file that reads as a shorter
 * one: {@link #seal()} seals the message, then closes the wrapped stream; if sealing fails, or
 * the caller gives up ({@link #abandon()}, {@link #fail}), the message is never sealed and the
 * wrapped stream is abandoned by the caller's {@link Abandon} (aborted where it can be, so that
 * nothing is stored; else closed, leaving a file every reader rejects as truncated), once.
 */
public final class SealedMessage {
    /** Gives up a wrapped stream whose message will never be sealed. */
    @FunctionalInterface
    public interface Abandon {
        /**
         * Aborts the wrapped stream where it can be, else closes it.
         *
         * @return what went wrong on the way, or null
         */
        IOException abandon();
    }

    private final OutputStream out;
    private final GcmOutputStream gcm;
    private final Abandon abandon;
    private final AtomicBoolean wrappedDone = new AtomicBoolean(); // closed (after sealing) or abandoned, once

    private SealedMessage(OutputStream out, GcmOutputStream gcm, Abandon abandon) {
        this.out = out;
        this.gcm = gcm;
        this.abandon = abandon;
    }

    /**
     * Writes {@code envelope} (if not null) to {@code out} and starts the message under
     * {@code streams}, which the caller may destroy once this returns. If this throws, the
     * caller abandons {@code out}.
     */
    public static SealedMessage start(OutputStream out, byte[] envelope, GcmStreams streams, Abandon abandon)
            throws IOException {
        if (envelope != null) {
            out.write(envelope); // alone, no file any reader accepts (the message must follow)
        }
        return new SealedMessage(out, streams.encrypt(new KeptOpen(out)), abandon);
    }

    /** The message's stream: write the plaintext here. */
    public GcmOutputStream gcm() {
        return gcm;
    }

    /**
     * Seals the message (its final chunk), then closes the wrapped stream. If sealing fails (or
     * an earlier write did), abandons the wrapped stream and throws that failure, with what the
     * abandoning hit suppressed.
     */
    public void seal() throws IOException {
        try {
            gcm.close(); // seals, or throws the failure that stopped the message
        } catch (Throwable e) {
            suppressCleanup(e);
            throw e;
        }
        if (wrappedDone.compareAndSet(false, true)) {
            out.close(); // sealed: an object store stores the object now
        }
    }

    /**
     * After {@code failure} (thrown by what the caller wrote into the message), abandons the
     * message unsealed and the wrapped stream, adding what that hit to {@code failure}.
     */
    public void fail(Throwable failure) {
        gcm.abort();
        suppressCleanup(failure);
    }

    private void suppressCleanup(Throwable e) {
        IOException cleanup = abandonWrapped();
        if (cleanup != null && cleanup != e && cleanup != e.getCause()) {
            e.addSuppressed(cleanup);
        }
    }

    /**
     * Abandons the message (never sealed: every reader rejects the file as truncated) and the
     * wrapped stream.
     *
     * @return what went wrong abandoning the wrapped stream, or null
     */
    public IOException abandon() {
        gcm.abort(); // frees the cipher and the key copies; never seals
        return abandonWrapped();
    }

    /**
     * Abandons the wrapped stream, once, whichever thread gets here first.
     *
     * @return what went wrong on the way, or null
     */
    public IOException abandonWrapped() {
        if (!wrappedDone.compareAndSet(false, true)) {
            return null;
        }
        return abandon.abandon();
    }

    /**
     * Closes a wrapped stream that cannot be aborted, whose message will never be sealed (it
     * then holds a file that every reader rejects as truncated).
     *
     * @return what went wrong on the way, or null
     */
    public static IOException closeAbandoned(Closeable out) {
        try {
            out.close();
            return null;
        } catch (IOException e) {
            return e;
        } catch (RuntimeException e) {
            return new IOException(e);
        }
    }

    /**
     * The wrapped stream as the GCM stream's sink, left open when that closes: the message
     * closes it once it is sealed, or abandons it if it never is.
     */
    private static final class KeptOpen extends OutputStream {
        private final OutputStream out;

        KeptOpen(OutputStream out) {
            this.out = out;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() {
            // the message closes or abandons the wrapped stream itself
        }
    }
}
