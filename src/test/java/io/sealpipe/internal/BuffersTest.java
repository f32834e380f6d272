package io.sealpipe.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.TestEngines;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * The overlap check looks at buffer objects, never at their memory. Every direct view it is
 * given here is read-only, on which any write through the buffer throws
 * ReadOnlyBufferException, so a check that answers has written nothing (callers never pass a
 * read-only output; the check must not need to write one). Views of one memory are compared by
 * address, read by libsealpipe or JNA, or through {@code sun.misc.Unsafe} before either has
 * loaded, which reads the same addresses; ranges that cannot meet are told apart without one;
 * without addresses (where Unsafe is unavailable too), views of one memory are not compared, as
 * documented.
 */
class BuffersTest {
    private static final int SIZE = 4096;
    private static final ToLongFunction<ByteBuffer> UNKNOWN = b -> -1;
    private static final ToLongFunction<ByteBuffer> NOT_ASKED = b -> {
        throw new AssertionError("an address was read for ranges that cannot meet");
    };

    /** A direct memory of random bytes, read-only: nothing can write through it. */
    private static ByteBuffer memory(int seed) {
        byte[] bytes = new byte[SIZE];
        new Random(seed).nextBytes(bytes);
        return ByteBuffer.allocateDirect(SIZE).put(bytes).clear().asReadOnlyBuffer();
    }

    private static byte[] contents(ByteBuffer memory) {
        byte[] copy = new byte[memory.capacity()];
        memory.duplicate().clear().get(copy);
        return copy;
    }

    /** Another object over the memory's bytes from {@code from} on: index 0 is the memory's byte {@code from}. */
    private static ByteBuffer slice(ByteBuffer memory, int from) {
        return memory.duplicate().position(from).slice();
    }

    /**
     * Buffers.address as the engines have it once Engines has probed: libsealpipe's or JNA's
     * where one loads (libsealpipe required in CI), else Unsafe's.
     */
    private static ToLongFunction<ByteBuffer> addresses() {
        Engines.report(); // loads libsealpipe and JNA where they load
        boolean known = Buffers.address(ByteBuffer.allocateDirect(1)) >= 0;
        if (TestEngines.required(EngineKind.OPENSSL_JNI)) {
            assertTrue(known, "libsealpipe loaded, but gives no addresses");
        }
        assumeTrue(known, "neither libsealpipe nor JNA loaded here: no addresses");
        return Buffers::address;
    }

    @Test
    void addressesAreThoseOfTheMemory() {
        ToLongFunction<ByteBuffer> address = addresses();
        ByteBuffer m = memory(1);
        long base = address.applyAsLong(m);
        assertEquals(base, address.applyAsLong(m.duplicate().position(100)), "the position is not the address");
        assertEquals(base + 1000, address.applyAsLong(slice(m, 1000)));
    }

    /** Direct buffers at many addresses: a memory, a duplicate positioned in it, slices at offsets, read-only ones. */
    private static List<ByteBuffer> buffersAtAddresses() {
        ByteBuffer plain = ByteBuffer.allocateDirect(SIZE);
        ByteBuffer m = memory(6);
        return List.of(plain, plain.duplicate().position(100), plain.slice(1000, 100), plain.slice(SIZE - 1, 1),
                m, slice(m, 1000), slice(slice(m, 1000), 7));
    }

    /** Unsafe's addresses, for each of {@link #buffersAtAddresses}, must be {@code reference}'s. */
    private static void assertUnsafeReads(String name, ToLongFunction<ByteBuffer> reference) {
        assertUnsafeAvailable();
        ToLongFunction<ByteBuffer> unsafe = Buffers.fallbackAddressReader();
        for (ByteBuffer b : buffersAtAddresses()) {
            long expected = reference.applyAsLong(b);
            assertTrue(expected > 0, name + " gives " + expected + " for " + b);
            assertEquals(expected, unsafe.applyAsLong(b), "through Unsafe and " + name + " for " + b);
        }
    }

    private static void assertUnsafeAvailable() {
        assertEquals(Optional.empty(), Buffers.unsafeAddressUnavailabilityCause(), "Unsafe is there on JDK 17+");
    }

    @Test
    void unsafeReadsTheAddressesJnaReads() {
        TestEngines.engine(EngineKind.OPENSSL_JNA); // JNA has loaded, or skipped outside CI
        assertUnsafeReads("JNA's Native.getDirectBufferPointer",
                b -> com.sun.jna.Pointer.nativeValue(com.sun.jna.Native.getDirectBufferPointer(b)));
    }

    @Test
    void unsafeReadsTheAddressesLibsealpipeReads() throws Exception {
        TestEngines.engine(EngineKind.OPENSSL_JNI); // libsealpipe has loaded, or skipped outside CI
        // The bridge is package-private to its engine's package.
        Method jni = Class.forName("io.sealpipe.engine.openssl.NativeCrypto")
                .getDeclaredMethod("directBufferAddress", ByteBuffer.class);
        jni.setAccessible(true);
        assertUnsafeReads("libsealpipe's NativeCrypto.directBufferAddress", b -> {
            try {
                return (long) jni.invoke(null, b);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
        });
    }

    @Test
    void unsafeGivesNoAddressForAHeapBuffer() {
        ToLongFunction<ByteBuffer> unsafe = Buffers.fallbackAddressReader();
        assertThrows(IllegalArgumentException.class, () -> unsafe.applyAsLong(ByteBuffer.allocate(16)));
        assertThrows(IllegalArgumentException.class,
                () -> unsafe.applyAsLong(ByteBuffer.allocate(16).asReadOnlyBuffer()));
    }

    @Test
    void viewsOfOneMemoryAreComparedByAddress() {
        assertViewsComparedByAddress(addresses());
    }

    /**
     * The gap that Unsafe closes: where neither libsealpipe nor JNA has loaded (a platform
     * without either, or an engine made before anything asked Engines), {@link Buffers#address}
     * reads through Unsafe alone, and views of one memory are compared all the same.
     */
    @Test
    void withUnsafeAloneViewsOfOneMemoryAreComparedByAddress() {
        assertUnsafeAvailable();
        assertViewsComparedByAddress(Buffers.fallbackAddressReader());
    }

    /** Partial overlaps of two views refused, in place and disjoint ranges accepted, nothing written. */
    private static void assertViewsComparedByAddress(ToLongFunction<ByteBuffer> address) {
        ByteBuffer m = memory(2);
        byte[] before = contents(m);
        ByteBuffer s = slice(m, 1000);
        check(m, 1000, 100, s, 0, 100, true, address); // in place
        check(m, 0, 1000, s, 0, 100, true, address); // just before
        check(m, 1100, 100, s, 0, 100, false, address); // just after
        assertThrows(IllegalArgumentException.class, () -> check(m, 999, 100, s, 0, 100, true, address));
        assertThrows(IllegalArgumentException.class, () -> check(m, 1099, 100, s, 0, 100, true, address));
        assertThrows(IllegalArgumentException.class, () -> check(s, 16, 500, m, 1000, 500, true, address));
        assertThrows(IllegalArgumentException.class, () -> check(m, 1000, 100, s, 0, 100, false, address),
                "in place is an overlap where it is not allowed");
        assertArrayEquals(before, contents(m), "memory left as it was");
    }

    @Test
    void rangesThatCannotMeetNeedNoAddress() {
        ByteBuffer m = memory(3);
        ByteBuffer s = slice(m, 1000);
        assertFalse(Buffers.mayMeet(m, 500, 500, s, 0, 500)); // the memory's bytes 500..999 and 1000..1499
        assertFalse(Buffers.mayMeet(s, 10, 500, m, 0, 1010)); // 1010..1509 and 0..1009
        check(m, 500, 500, s, 0, 500, false, NOT_ASKED);
        check(s, 10, 500, m, 0, 1010, false, NOT_ASKED);
        assertTrue(Buffers.mayMeet(m, 500, 501, s, 0, 500)); // byte 1000 is in both
        assertTrue(Buffers.mayMeet(s, 9, 500, m, 0, 1010)); // byte 1009
        assertTrue(Buffers.mayMeet(m, 1000, 100, s, 0, 100)); // in place
    }

    /**
     * What the check cannot see without addresses (where Unsafe is unavailable and neither
     * libsealpipe nor JNA has loaded), it lets through, and it writes nothing.
     */
    @Test
    void withoutAddressesViewsOfOneMemoryAreNotCompared() {
        ByteBuffer m = memory(4);
        byte[] before = contents(m);
        ByteBuffer s = slice(m, 1000);
        assertDoesNotThrow(() -> check(m, 1000, 100, s, 0, 100, true, UNKNOWN)); // in place
        assertDoesNotThrow(() -> check(m, 999, 100, s, 0, 100, true, UNKNOWN)); // a partial overlap, not detected
        assertArrayEquals(before, contents(m), "memory left as it was");
    }

    @Test
    void arraysAreOneMemoryOnlyIfOneArray() {
        byte[] a = new byte[SIZE];
        check(a, 0, 100, new byte[SIZE], 50, 100, false, NOT_ASKED);
        check(a, 100, 100, a, 100, 100, true, NOT_ASKED);
        check(a, 0, 100, a, 100, 100, false, NOT_ASKED);
        assertThrows(IllegalArgumentException.class, () -> check(a, 0, 100, a, 99, 100, true, NOT_ASKED));
        assertThrows(IllegalArgumentException.class, () -> check(a, 100, 100, a, 100, 100, false, NOT_ASKED));
        check(a, 0, 100, memory(5), 0, 100, false, NOT_ASKED); // an array never lies in a direct buffer
    }

    private static void check(Object in, int inOffset, int inLength, Object out, int outOffset, int outLength,
            boolean inPlace, ToLongFunction<ByteBuffer> address) {
        Buffers.checkOverlap(in, inOffset, inLength, out, outOffset, outLength, inPlace, address);
    }
}
