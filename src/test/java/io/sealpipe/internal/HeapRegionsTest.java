package io.sealpipe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class HeapRegionsTest {

    @Test
    void theLargestRegularArrayIsJustUnderHalfARegion() {
        assertEquals((1 << 19) - 32, HeapRegions.largestRegularArray(1 << 20));
        assertEquals((1 << 20) - 32, HeapRegions.largestRegularArray(2 << 20));
        assertEquals(Long.MAX_VALUE, HeapRegions.largestRegularArray(0), "not G1: no humongous objects");
        assertTrue(HeapRegions.largestRegularArray() >= HeapRegions.largestRegularArray(HeapRegions.SMALLEST_REGION),
                "this JVM's regions are at least G1's smallest");
    }
}
