package io.sealpipe.internal;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.ToLongFunction;

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

    /**
     * Rejects an input and an output (each a byte[] or a direct ByteBuffer, absolute ranges)
     * that share memory, but for the same start when {@code inPlace} allows it. Two byte[] share
     * memory only if they are one array; two direct buffers can be different views of the same
     * memory, so they are compared by address, which {@code address} gives (or -1 when the
     * engine cannot tell, and then checks them itself).
     */
    public static void checkOverlap(Object in, int inOffset, int inLength, Object out, int outOffset, int outLength,
            boolean inPlace, ToLongFunction<ByteBuffer> address) {
        if (inLength == 0 || outLength == 0) {
            return;
        }
        long inStart;
        long outStart;
        if (in == out) {
            inStart = inOffset;
            outStart = outOffset;
        } else if (in instanceof ByteBuffer a && out instanceof ByteBuffer b) {
            long aAddress = address.applyAsLong(a);
            long bAddress = address.applyAsLong(b);
            if (aAddress < 0 || bAddress < 0) {
                return;
            }
            inStart = aAddress + inOffset;
            outStart = bAddress + outOffset;
        } else {
            return; // different arrays, or an array and native memory
        }
        boolean overlap = inStart < outStart + outLength && outStart < inStart + inLength;
        if (overlap && !(inPlace && inStart == outStart)) {
            throw new IllegalArgumentException("input and output overlap in memory"
                    + (inPlace ? ": use the same start (in place) or disjoint ranges" : ": use disjoint ranges"));
        }
    }

    /** Copies the remaining bytes into a new array (used only for read-only heap buffers). */
    public static byte[] remainingCopy(ByteBuffer b) {
        byte[] copy = new byte[b.remaining()];
        b.duplicate().get(copy);
        return copy;
    }
}
