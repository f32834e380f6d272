package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.gcm.GcmInternals;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 29's bound on many open streams: {@value #STREAMS} streams at parallelism 2, each part
 * way through a message long enough for its workers ({@link ManyOpenStreamsChild}), in a child
 * JVM on G1 with 1 MiB regions (the smallest, so the lowest humongous threshold: 512 KiB).
 *
 * <ul>
 *   <li>No stream allocates a humongous object: G1 reports no humongous region while they are
 *       open (a 1 MiB batch buffer is one, and takes two whole regions).
 *   <li>The heap each kind of stream holds, after a full collection, is at most its buffers
 *       ({@link #bounds}; measured: see docs/PERFORMANCE.md).
 *   <li>They start no thread of their own: the only threads added are the shared workers, at
 *       most {@code Workers.MAX_THREADS}.
 * </ul>
 */
class ManyOpenStreamsTest {
    private static final int STREAMS = 1000;
    private static final int CHUNK = 16384;
    private static final int SEALED_CHUNK = 16400;
    /**
     * What a stream may hold beyond its buffers: its ciphers and its workers' (with their scratch
     * arrays), its fields.
     */
    private static final int SLACK = 96 * 1024;

    /**
     * The bound per open stream of each kind at parallelism 2, with batches of {@code batch}
     * chunks: its buffers. A GCM writer has the chunk it fills and the sealed chunks it passes on
     * (its sequential start), then two batches, each its plaintext and its sealed chunks; a GCM
     * reader a batch of ciphertext being opened, the next one read ahead, and the plaintext of two
     * batches; a CTR writer its buffer and the buffer of its large writes; a CTR reader its buffer.
     */
    static Map<String, Long> bounds(int batch) {
        return Map.of(
                "gcm-write", CHUNK + (long) GcmInternals.CHUNKS_PER_WRITE * SEALED_CHUNK
                        + 2L * batch * (CHUNK + SEALED_CHUNK) + SLACK,
                "gcm-read", 2L * (batch * SEALED_CHUNK + 1) + 2L * batch * CHUNK + SLACK,
                "ctr-write", (long) CtrStreams.DEFAULT_BUFFER_SIZE + (long) batch * CHUNK + SLACK,
                "ctr-read", (long) CtrStreams.DEFAULT_BUFFER_SIZE + SLACK);
    }

    /** The machine's memory this test needs: the child's 2 GiB heap, its JVM, and this JVM beside it. */
    private static final long MEMORY_NEEDED = 4L << 30;

    @Test
    void aThousandOpenStreamsHoldABoundedHeapAndNoThreadsOfTheirOwn(@TempDir Path dir)
            throws IOException, InterruptedException {
        long memory = MachineRequirement.totalMemory();
        MachineRequirement.require(memory >= MEMORY_NEEDED, "the machine has " + (memory >> 20)
                + " MiB of memory, and this"
                + " test needs " + (MEMORY_NEEDED >> 20) + " MiB (a child JVM with -Xmx2g)");
        Path gcLog = dir.resolve("gc.log");
        List<String> command = ChildJvm.command("-XX:+UseG1GC", "-XX:G1HeapRegionSize=1m", "-Xmx2g",
                "-Xlog:gc+heap=info:file=" + gcLog, "-cp", System.getProperty("java.class.path"),
                ManyOpenStreamsChild.class.getName(), Integer.toString(STREAMS), "openssl-jni", gcLog.toString());
        // The child's output goes to a file, read once it exited: a child that hangs is killed
        // after 5 minutes, not waited for until the fork's own timeout.
        Path log = dir.resolve("child.log");
        Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        boolean exited = child.waitFor(5, TimeUnit.MINUTES);
        if (!exited) {
            child.destroyForcibly().waitFor();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertTrue(exited, () -> "the child JVM did not exit within 5 minutes, and was killed: " + output);
        assertEquals(0, child.exitValue(), output);

        assertEquals(STREAMS, value(output, "streams"), output);
        System.out.println(output.lines().filter(line -> !line.contains(" INFO ")).toList());
        assertEquals(31, value(output, "batch-chunks"), "batches in a heap of 1 MiB regions: " + output);
        for (Map.Entry<String, Long> bound : bounds(31).entrySet()) {
            long held = value(output, "held-" + bound.getKey());
            assertTrue(held <= bound.getValue(), "an open " + bound.getKey() + " stream holds " + held
                    + " bytes, more than its"
                    + " buffers (" + bound.getValue() + "): " + output);
        }
        long added = value(output, "threads-open") - value(output, "threads-before");
        assertTrue(added <= value(output, "workers-max"),
                "the open streams added " + added + " threads, more than the shared workers: " + output);

        assertEquals(value(output, "humongous-before"), value(output, "humongous-open"),
                "the open streams hold humongous objects (G1, 1 MiB regions): " + output);
        assertEquals(value(output, "humongous-before"), value(output, "humongous-max"),
                "the streams allocated humongous objects while they were opened (G1, 1 MiB regions): " + output);
    }

    private static long value(String output, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + ": (\\d+)$").matcher(output);
        if (!m.find()) {
            throw new AssertionError("the child printed no " + name + ": " + output);
        }
        return Long.parseLong(m.group(1));
    }
}
