package io.sealpipe;

import java.io.Closeable;

/**
 * A writing stream that can be abandoned: {@link #abort()} releases everything without ending
 * the output, so that what was written so far can never pass for a complete message.
 *
 * <p>{@code close()} cannot tell that an exception is on its way through the code that wrote
 * (a try-with-resources block closes the stream either way), so it ends the message. When the
 * data stops short because of a failure, call {@code abort()} instead:
 *
 * <pre>{@code
 * GcmOutputStream out = gcm.encrypt(Files.newOutputStream(path));
 * try {
 *     source.transferTo(out);
 * } catch (Throwable t) {
 *     out.abort(); // the file is left as a truncated message that every reader rejects
 *     throw t;
 * }
 * out.close();     // ends the message
 * }</pre>
 */
public interface Abortable extends Closeable {
    /**
     * Abandons the output: releases everything (waits for helper threads, closes the wrapped
     * stream unless the builder said {@code closeUnderlying(false)}, frees the engine, zeroes the
     * buffers) and never ends the message: an encrypted message is left truncated and readers
     * reject it. Data still buffered is dropped. Layers over other sealpipe streams abandon those
     * too. Does nothing if the stream is already closed; a later {@code close()} does nothing.
     * Throws no exception: a failure to close the wrapped stream is not reported, since the
     * output is abandoned anyway.
     */
    void abort();
}
