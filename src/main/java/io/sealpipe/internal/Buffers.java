package io.sealpipe.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
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

    /** Reads a direct buffer's address through JNI; null until libsealpipe or JNA has loaded. */
    private static final AtomicReference<ToLongFunction<ByteBuffer>> ADDRESS_READER = new AtomicReference<>();

    /** A reader that knows no address: -1 for every buffer. */
    private static final ToLongFunction<ByteBuffer> NO_ADDRESSES = b -> -1;

    /**
     * Gives {@link #address} a way to read a direct buffer's address: JNI's
     * {@code GetDirectBufferAddress}, which reads the buffer object, never its memory. Called by
     * the openssl-jni engine once libsealpipe has loaded and by openssl-jna once JNA has;
     * {@link io.sealpipe.engine.Engines} loads both (where they load) when it first probes the
     * engines. The first reader stays: both give the same addresses. Until one is given,
     * {@link #address} reads through {@code sun.misc.Unsafe}, which gives them too.
     */
    public static void readAddressesWith(ToLongFunction<ByteBuffer> reader) {
        ADDRESS_READER.compareAndSet(null, Objects.requireNonNull(reader, "reader"));
    }

    /**
     * The address of a direct buffer's index 0 (direct buffers only), read from the buffer
     * object, never from its memory: through libsealpipe or JNA once one has loaded
     * ({@link #readAddressesWith}), until then through {@code sun.misc.Unsafe}; -1 where
     * Unsafe is unavailable too ({@link #unsafeAddressUnavailabilityCause}): Java 17 has no
     * public way to read it.
     */
    public static long address(ByteBuffer direct) {
        ToLongFunction<ByteBuffer> reader = ADDRESS_READER.get();
        return (reader != null ? reader : fallbackAddressReader()).applyAsLong(direct);
    }

    /**
     * The reader {@link #address} uses while neither libsealpipe nor JNA has loaded: the one
     * through {@code sun.misc.Unsafe}, set up at the first call, or, where that is unavailable
     * ({@link #unsafeAddressUnavailabilityCause} says why), one that gives -1 for every buffer.
     * Package-private so that the tests can run the check with it alone.
     */
    static ToLongFunction<ByteBuffer> fallbackAddressReader() {
        return UnsafeAddresses.READER;
    }

    /**
     * Why direct buffers' addresses cannot be read through {@code sun.misc.Unsafe} here, or empty
     * where they can; set up at the first call, if {@link #address} has not done so. Where it is
     * unavailable and neither libsealpipe nor JNA has loaded, {@link #checkOverlap} cannot compare
     * two views of one direct buffer (a warning is logged once, naming the cause).
     */
    public static Optional<Throwable> unsafeAddressUnavailabilityCause() {
        return Optional.ofNullable(UnsafeAddresses.FAILURE);
    }

    /**
     * Direct buffers' addresses through {@code sun.misc.Unsafe}, set up when this class is first
     * used (the JVM initialises it once, for all threads). The only value read is one field of
     * the buffer object, {@code java.nio.Buffer.address}: where index 0 lies, which is what JNI's
     * {@code GetDirectBufferAddress} returns. Nothing is read or written through the address.
     *
     * <p>All by reflection, so that a JVM without the class fails here, where it is caught, and
     * not when {@link Buffers} is linked. Each step can fail, and then the cause is kept and
     * {@link #READER} gives -1: the module {@code jdk.unsupported} (which exports and opens
     * {@code sun.misc}) not in the run-time image, or not resolved by a modular application; a
     * SecurityManager that refuses {@code setAccessible} or {@code getDeclaredField}; a JDK
     * without {@code theUnsafe}, {@code Buffer.address} or these methods; a JVM run with
     * {@code --sun-misc-unsafe-memory-access=deny} (from JDK 24 on, its default, {@code warn},
     * prints a warning on standard error at the first call, which is made here). A field that
     * is not the address is caught by {@link #checkReadsAddresses}.
     */
    private static final class UnsafeAddresses {
        /** {@code Unsafe.getLong(Object, long)}, bound to the Unsafe instance; null if unavailable. */
        private static final MethodHandle GET_LONG;
        /** Where {@code Buffer.address} lies in a buffer object. */
        private static final long ADDRESS_FIELD;
        static final Throwable FAILURE;
        static final ToLongFunction<ByteBuffer> READER;

        static {
            MethodHandle getLong = null;
            long offset = -1;
            Throwable failure = null;
            try {
                Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
                Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
                theUnsafe.setAccessible(true);
                Object unsafe = theUnsafe.get(null);
                MethodHandles.Lookup lookup = MethodHandles.publicLookup();
                Field address = Buffer.class.getDeclaredField("address");
                offset = (long) lookup.findVirtual(unsafeClass, "objectFieldOffset",
                        MethodType.methodType(long.class, Field.class)).invoke(unsafe, address);
                getLong = lookup.findVirtual(unsafeClass, "getLong",
                        MethodType.methodType(long.class, Object.class, long.class)).bindTo(unsafe);
                checkReadsAddresses(getLong, offset);
            } catch (Throwable t) { // ClassNotFoundException, NoSuchFieldException, SecurityException, ...
                failure = t;
                getLong = null;
            }
            GET_LONG = getLong;
            ADDRESS_FIELD = offset;
            FAILURE = failure;
            READER = failure == null ? UnsafeAddresses::read : NO_ADDRESSES;
            if (failure != null) {
                Log.of(Buffers.class).warn("sealpipe cannot read direct buffers' addresses through sun.misc.Unsafe"
                        + " ({}): until libsealpipe or JNA loads, two views of one direct buffer are not compared"
                        + " for overlap", failure.toString());
            }
        }

        private UnsafeAddresses() {}

        /**
         * Fails unless the field read is the address: it must be the address modulo 2^30 that
         * {@link ByteBuffer#alignmentOffset} gives, and a slice from index 1 must lie one byte
         * further. Uses a 2-byte buffer of its own.
         */
        private static void checkReadsAddresses(MethodHandle getLong, long offset) throws Throwable {
            ByteBuffer probe = ByteBuffer.allocateDirect(2);
            long base = (long) getLong.invokeExact((Object) probe, offset);
            long next = (long) getLong.invokeExact((Object) probe.slice(1, 1), offset);
            int modular = probe.alignmentOffset(0, ADDRESS_UNIT);
            if (base == 0 || next != base + 1 || Math.floorMod(base, ADDRESS_UNIT) != modular) {
                throw new IllegalStateException("java.nio.Buffer.address read through Unsafe is not the address: "
                        + base + ", " + next + " one byte further, " + modular + " modulo 2^30");
            }
        }

        private static long read(ByteBuffer direct) {
            if (!direct.isDirect()) {
                throw new IllegalArgumentException("buffer must be a direct ByteBuffer");
            }
            try {
                return (long) GET_LONG.invokeExact((Object) direct, ADDRESS_FIELD);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) { // getLong throws nothing checked
                throw new IllegalStateException(t);
            }
        }
    }

    /**
     * Rejects an input and an output (each a byte[] or a direct ByteBuffer, absolute ranges)
     * that share memory, but for the same start when {@code inPlace} allows it. Neither range is
     * written, nor read: the check looks at the buffer objects only, so memory that another
     * thread or process uses at the same time is left alone.
     *
     * <p>Two byte[] share memory only if they are one array, and then the offsets are compared.
     * Two direct buffers can be different objects over the same memory ({@code duplicate()},
     * {@code slice()}, {@code asReadOnlyBuffer()}), so they are compared by address. First
     * without one: a direct buffer tells the address of each byte modulo 2^30
     * ({@link ByteBuffer#alignmentOffset}), and ranges whose addresses cannot meet at that
     * modulus are disjoint, which settles most calls. Otherwise by the addresses that
     * {@code address} gives (the engine's, or {@link #address}: libsealpipe's or JNA's once one
     * has loaded, else read through {@code sun.misc.Unsafe}), exactly.
     *
     * <p>Not detected, and then taken as disjoint:
     * <ul>
     *   <li>direct buffers whose address {@code address} does not know (-1): for
     *       {@link #address}, where {@code sun.misc.Unsafe} is unavailable
     *       ({@link #unsafeAddressUnavailabilityCause}) and neither libsealpipe nor JNA has
     *       loaded, two views of one memory are not compared;
     *   <li>one memory at two addresses: a file mapped twice ({@code FileChannel.map} twice over
     *       the same region gives two mappings at different addresses), memory shared with
     *       another process, or mapped twice by native code;
     *   <li>read-only heap buffers, which expose no array: the callers read them through a copy,
     *       whole in {@link BaseAeadCipher} and 16 KiB at a time in {@link BaseStreamCipher},
     *       where a read-only view of the output's own array that partly overlaps it gives
     *       wrong bytes (a byte[] and a direct buffer never share memory).
     * </ul>
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
            if (!mayMeet(a, inOffset, inLength, b, outOffset, outLength)) {
                return;
            }
            long aAddress = address.applyAsLong(a);
            long bAddress = address.applyAsLong(b);
            if (aAddress < 0 || bAddress < 0) {
                return; // not known: not detected (see above)
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

    /** The largest unit for which a direct buffer tells its addresses modulo it (2^30). */
    private static final int ADDRESS_UNIT = 1 << 30;

    /**
     * Whether two direct ranges could share memory as far as their addresses modulo 2^30 tell:
     * false proves them disjoint. The distance from {@code in}'s start to {@code out}'s is known
     * modulo 2^30; the ranges meet only at a distance above {@code -outLength} and below
     * {@code inLength}, and this looks for one that fits.
     */
    static boolean mayMeet(ByteBuffer in, int inOffset, int inLength, ByteBuffer out, int outOffset, int outLength) {
        long modular = Math.floorMod(
                out.alignmentOffset(outOffset, ADDRESS_UNIT) - in.alignmentOffset(inOffset, ADDRESS_UNIT),
                ADDRESS_UNIT);
        // The smallest distance congruent to `modular` that is above -outLength.
        long nearest = modular - (long) ADDRESS_UNIT * ((modular + outLength - 1) / ADDRESS_UNIT);
        return nearest < inLength;
    }

    /** Copies the remaining bytes into a new array (used only for read-only heap buffers). */
    public static byte[] remainingCopy(ByteBuffer b) {
        byte[] copy = new byte[b.remaining()];
        b.duplicate().get(copy);
        return copy;
    }
}
