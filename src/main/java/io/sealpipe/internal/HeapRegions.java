package io.sealpipe.internal;

import java.lang.management.ManagementFactory;

/**
 * The running JVM's G1 heap regions, for buffers that must not be humongous objects: G1
 * allocates an object of half a region or more in whole regions of its own (a 1 MiB array takes
 * two 1 MiB regions), outside the young generation. Regions are 1 MiB in heaps up to about 2 GiB
 * ({@code -XX:G1HeapRegionSize} or the heap size decides), 2 MiB up to 4 GiB, and larger above.
 */
public final class HeapRegions {
    /** G1's smallest region, assumed when the JVM cannot tell (no {@code jdk.management}). */
    static final long SMALLEST_REGION = 1 << 20;
    /** An array's header and alignment, at most. */
    private static final int ARRAY_OVERHEAD = 32;

    private static final long REGION = detect();

    /**
     * Chunks per batch of 16 KiB chunks sealed with 16-byte tags (chunked GCM) in this JVM: the
     * parallel GCM writer's batches, and the wide buffer of a parallel CTR writer (as many 16 KiB
     * blocks), so neither is a humongous object.
     */
    public static final int SEALED_CHUNK_BATCH = batchChunks(largestRegularArray(), 16384 + 16);

    private HeapRegions() {}

    /**
     * The largest {@code byte[]} that is not a humongous object here: just under half a G1
     * region, or {@link Long#MAX_VALUE} with another collector.
     */
    public static long largestRegularArray() {
        return largestRegularArray(REGION);
    }

    /**
     * Chunks per batch for buffers of batches of {@code sealedChunk}-byte chunks: the most, from 4
     * up to 63, whose sealed buffer and one byte more is at most {@code largestArray} bytes.
     */
    public static int batchChunks(long largestArray, int sealedChunk) {
        return (int) Math.max(4, Math.min(63, (largestArray - 1) / sealedChunk));
    }

    /** {@link #largestRegularArray()} for G1 regions of {@code regionBytes} (0: not G1). */
    static long largestRegularArray(long regionBytes) {
        return regionBytes == 0 ? Long.MAX_VALUE : regionBytes / 2 - ARRAY_OVERHEAD;
    }

    /** The G1 region size in bytes, 0 without G1, the smallest region if the JVM cannot tell. */
    private static long detect() {
        try {
            com.sun.management.HotSpotDiagnosticMXBean hotspot =
                    ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            if (!Boolean.parseBoolean(hotspot.getVMOption("UseG1GC").getValue())) {
                return 0;
            }
            return Long.parseLong(hotspot.getVMOption("G1HeapRegionSize").getValue());
        } catch (RuntimeException | LinkageError e) {
            return SMALLEST_REGION; // not HotSpot, or no jdk.management module
        }
    }
}
