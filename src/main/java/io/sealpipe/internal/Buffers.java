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
     * memory, so they are compared by address, which {@code address} gives, or -1 when the
     * engine cannot tell: then by {@link #distanceIfShared}.
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
                long distance = distanceIfShared(a, inOffset, inLength, b, outOffset, outLength);
                if (distance == NOT_SHARED) {
                    return;
                }
                inStart = 0;
                outStart = distance;
            } else {
                inStart = aAddress + inOffset;
                outStart = bAddress + outOffset;
            }
        } else {
            return; // different arrays, or an array and native memory
        }
        boolean overlap = inStart < outStart + outLength && outStart < inStart + inLength;
        if (overlap && !(inPlace && inStart == outStart)) {
            throw new IllegalArgumentException("input and output overlap in memory"
                    + (inPlace ? ": use the same start (in place) or disjoint ranges" : ": use disjoint ranges"));
        }
    }

    /** {@link #distanceIfShared}'s answer for two ranges that share no memory. */
    static final long NOT_SHARED = Long.MIN_VALUE;

    /** The largest unit for which a direct buffer tells its addresses modulo it (2^30). */
    private static final int ADDRESS_UNIT = 1 << 30;

    /**
     * How far {@code out}'s range starts after {@code in}'s in memory (negative: before it) if
     * the two ranges share memory, else {@link #NOT_SHARED}; for direct buffers whose addresses
     * the engine does not give (JCE and accp pass the buffers to their provider, openssl-jni
     * reads the addresses in C). A
     * direct buffer tells the address of each byte modulo 2^30 ({@link
     * ByteBuffer#alignmentOffset}), which leaves one distance at which the ranges could meet (a
     * few when they are longer than 2^29). For each, one byte of the output is written with a
     * value other than that of the input byte it would be, the input byte read back, and the
     * output byte restored: the input byte changed if and only if it is the same memory. Only
     * output bytes that the call is about to write are touched, and left as they were, so a
     * refused call still leaves the caller's memory as it was. Like every argument check, this
     * assumes that no other thread writes the two ranges during the call.
     */
    static long distanceIfShared(ByteBuffer in, int inOffset, int inLength, ByteBuffer out, int outOffset,
            int outLength) {
        long modular = Math.floorMod(
                out.alignmentOffset(outOffset, ADDRESS_UNIT) - in.alignmentOffset(inOffset, ADDRESS_UNIT),
                ADDRESS_UNIT);
        // The smallest distance congruent to `modular` at which the ranges meet (> -outLength), then every next one.
        for (long d = modular - (long) ADDRESS_UNIT * ((modular + outLength - 1) / ADDRESS_UNIT); d < inLength;
                d += ADDRESS_UNIT) {
            int inIndex = d >= 0 ? inOffset + (int) d : inOffset;
            int outIndex = d >= 0 ? outOffset : outOffset - (int) d;
            byte kept = out.get(outIndex);
            byte seen = in.get(inIndex);
            out.put(outIndex, (byte) ~seen);
            boolean shared = in.get(inIndex) != seen;
            out.put(outIndex, kept);
            if (shared) {
                return d;
            }
        }
        return NOT_SHARED;
    }

    /** Copies the remaining bytes into a new array (used only for read-only heap buffers). */
    public static byte[] remainingCopy(ByteBuffer b) {
        byte[] copy = new byte[b.remaining()];
        b.duplicate().get(copy);
        return copy;
    }
}
