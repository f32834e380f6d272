package io.sealpipe.internal;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * ByteBuffers as (base, offset) pairs for the engines: a direct buffer is its own base with the
 * position as offset; a heap buffer is its array with {@code arrayOffset() + position()}.
 * Read-only heap buffers expose neither and are copied by the callers.
 */
public final class Buffers {
    private static final byte[] ZEROS = new byte[4096];

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

    /** Zeroes {@code length} bytes of a byte[] or direct ByteBuffer from the absolute {@code offset}. */
    public static void wipe(Object base, int offset, int length) {
        if (base instanceof byte[] array) {
            Arrays.fill(array, offset, offset + length, (byte) 0);
            return;
        }
        ByteBuffer b = (ByteBuffer) base;
        for (int done = 0; done < length; ) {
            int n = Math.min(ZEROS.length, length - done);
            b.put(offset + done, ZEROS, 0, n);
            done += n;
        }
    }

    /** Copies the remaining bytes into a new array (used only for read-only heap buffers). */
    public static byte[] remainingCopy(ByteBuffer b) {
        byte[] copy = new byte[b.remaining()];
        b.duplicate().get(copy);
        return copy;
    }
}
