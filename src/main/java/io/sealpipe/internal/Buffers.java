package io.sealpipe.internal;

import java.nio.ByteBuffer;

/**
 * ByteBuffers as (base, offset) pairs for the engines: a direct buffer is its own base with the
 * position as offset; a heap buffer is its array with {@code arrayOffset() + position()}.
 * Read-only heap buffers expose neither and are copied by the callers.
 */
public final class Buffers {
    private Buffers() {}

    public static boolean accessible(ByteBuffer b) {
        return b.isDirect() || b.hasArray();
    }

    public static Object base(ByteBuffer b) {
        return b.isDirect() ? b : b.array();
    }

    public static int offset(ByteBuffer b) {
        return b.isDirect() ? b.position() : b.arrayOffset() + b.position();
    }

    /** Advances the buffer's position by n. */
    public static void skip(ByteBuffer b, int n) {
        b.position(b.position() + n);
    }

    /** Copies the remaining bytes into a new array (used only for read-only heap buffers). */
    public static byte[] remainingCopy(ByteBuffer b) {
        byte[] copy = new byte[b.remaining()];
        b.duplicate().get(copy);
        return copy;
    }
}
