package io.sealpipe.gcm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sealpipe.internal.HeapRegions;
import org.junit.jupiter.api.Test;

/** The parallel streams' batch: the most chunks, up to 63, whose buffers are not G1 humongous objects. */
class BatchSizeTest {

    @Test
    void aBatchIsTheMostChunksBelowHalfARegion() {
        assertEquals(31, GcmParallelWriter.batchChunks((1 << 19) - 32), "1 MiB regions");
        assertEquals(63, GcmParallelWriter.batchChunks((1 << 20) - 32), "2 MiB regions");
        assertEquals(63, GcmParallelWriter.batchChunks((16 << 20) - 32), "16 MiB regions");
        assertEquals(63, GcmParallelWriter.batchChunks(Long.MAX_VALUE), "another collector");
        long largest = HeapRegions.largestRegularArray();
        int batch = GcmParallelWriter.BATCH_CHUNKS;
        assertEquals(GcmParallelWriter.batchChunks(largest), batch, "this JVM");
        assertEquals(true, (long) batch * Cobblestone.SEALED_CHUNK_SIZE + 1 <= largest, "a reader's sealed buffer");
    }
}
