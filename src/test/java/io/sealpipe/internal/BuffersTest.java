package io.sealpipe.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Direct buffers compared without their addresses: views of one memory are found at their
 * distance, other ranges are not, and nothing is changed. Inputs may be read-only, outputs never
 * are (the callers check that first).
 */
class BuffersTest {
    private static final int SIZE = 4096;

    private static ByteBuffer memory(int seed) {
        byte[] bytes = new byte[SIZE];
        new Random(seed).nextBytes(bytes);
        return ByteBuffer.allocateDirect(SIZE).put(bytes).clear();
    }

    private static byte[] contents(ByteBuffer memory) {
        byte[] copy = new byte[memory.capacity()];
        memory.duplicate().clear().get(copy);
        return copy;
    }

    /** The distance between the ranges, with every byte of both memories as it was. */
    private static long distance(ByteBuffer in, int inOffset, int inLength, ByteBuffer out, int outOffset,
            int outLength, ByteBuffer... memories) {
        byte[][] before = new byte[memories.length][];
        for (int i = 0; i < memories.length; i++) {
            before[i] = contents(memories[i]);
        }
        long d = Buffers.distanceIfShared(in, inOffset, inLength, out, outOffset, outLength);
        for (int i = 0; i < memories.length; i++) {
            assertArrayEquals(before[i], contents(memories[i]), "memory left as it was");
        }
        return d;
    }

    @Test
    void viewsOfOneMemoryAreFoundAtTheirDistance() {
        ByteBuffer m = memory(1);
        ByteBuffer slice = m.duplicate().position(1000).slice(); // index 0 is the memory's byte 1000
        ByteBuffer readOnly = m.asReadOnlyBuffer();
        assertEquals(0, distance(m.duplicate(), 100, 500, m.duplicate(), 100, 500, m));
        assertEquals(0, distance(readOnly, 1000, 500, slice, 0, 500, m));
        assertEquals(16, distance(m.duplicate(), 984, 500, slice, 0, 500, m));
        assertEquals(-16, distance(slice, 16, 500, m.duplicate(), 1000, 500, m));
        assertEquals(499, distance(readOnly, 501, 500, slice, 0, 10, m)); // the input's last byte
        assertEquals(-9, distance(readOnly, 1009, 500, slice, 0, 10, m)); // the output's last byte
    }

    @Test
    void rangesThatDoNotMeetAreNotShared() {
        ByteBuffer m = memory(2);
        ByteBuffer slice = m.duplicate().position(1000).slice();
        assertEquals(Buffers.NOT_SHARED, distance(m.duplicate(), 500, 500, slice, 0, 500, m)); // just after
        assertEquals(Buffers.NOT_SHARED, distance(slice, 10, 500, m.duplicate(), 0, 1010, m)); // just before
        ByteBuffer other = memory(3);
        for (int offset = 0; offset < 64; offset++) {
            assertEquals(Buffers.NOT_SHARED, distance(m, 0, SIZE, other, offset, SIZE - offset, m, other));
        }
    }

    @Test
    void checkOverlapRefusesPartialOverlapOfViewsWithoutAddresses() {
        ByteBuffer m = memory(4);
        ByteBuffer slice = m.duplicate().position(1000).slice();
        Buffers.checkOverlap(m, 1000, 100, slice, 0, 100, true, b -> -1); // in place
        Buffers.checkOverlap(m, 0, 1000, slice, 0, 100, true, b -> -1); // adjacent
        assertThrows(IllegalArgumentException.class, () -> Buffers.checkOverlap(m, 999, 100, slice, 0, 100, true,
                b -> -1));
        assertThrows(IllegalArgumentException.class, () -> Buffers.checkOverlap(m, 1000, 100, slice, 0, 100, false,
                b -> -1));
    }
}
