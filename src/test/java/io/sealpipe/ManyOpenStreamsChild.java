package io.sealpipe;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.gcm.GcmInternals;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.Workers;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The child JVM of {@link ManyOpenStreamsTest}: opens {@code count} streams at parallelism 2 (a
 * quarter each GCM writers, GCM readers, CTR writers and CTR readers), each part way through a
 * message long enough for its workers (past GCM's first MiB, and CTR writes of 1 MiB), then
 * prints the heap used after a full collection before and while they are open (and each kind's
 * share per stream, {@code held-KIND}, measured as each kind is opened), G1's humongous
 * regions then (from its log, the file named by the third argument), and the threads.
 * Readers share one ciphertext array and check every byte they read; writers write to a sink
 * that only counts.
 */
public final class ManyOpenStreamsChild {
    private static final int WRITTEN = 3 * (1 << 20) / 2 + 12345; // each writer: 1.5 MiB and a bit
    private static final int READ = 3 * (1 << 20) / 2 + 54321;    // each reader: as much, of 3 MiB

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        EngineKind engine = EngineKind.fromId(args[1]);
        byte[] key = new byte[32];
        new SplittableRandom(29).nextBytes(key);
        byte[] plain = new byte[3 << 20];
        new SplittableRandom(30).nextBytes(plain);
        byte[] iv = new byte[16];
        GcmStreams gcm = GcmStreams.builder().key(key.clone()).engine(engine).parallelism(2).build();
        CtrStreams ctr = CtrStreams.builder().key(key.clone()).iv(iv).engine(engine).parallelism(2).build();
        ByteArrayOutputStream gcmOut = new ByteArrayOutputStream();
        try (OutputStream out = gcm.encrypt(gcmOut)) {
            out.write(plain);
        }
        byte[] gcmSealed = gcmOut.toByteArray();
        ByteArrayOutputStream ctrOut = new ByteArrayOutputStream();
        try (OutputStream out = ctr.encrypt(ctrOut)) {
            out.write(plain);
        }
        byte[] ctrSealed = ctrOut.toByteArray();

        Path gcLog = Path.of(args[2]);
        byte[] got = new byte[READ];
        long before = heapAfterFullCollection();
        String humongousBefore = lastHumongousRegions(gcLog);
        int collectionsBefore = humongousCounts(gcLog).size();
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        List<Closeable> open = new ArrayList<>(count);
        // a quarter of each kind, kind after kind, each kind's share of the heap measured once it is open
        String[] kinds = {"gcm-write", "gcm-read", "ctr-write", "ctr-read"};
        long last = before;
        for (int k = 0; k < kinds.length; k++) {
            for (int i = k; i < count; i += kinds.length) {
                switch (k) {
                    case 0 -> open.add(writing(gcm.encrypt(new CountingSink()), plain));
                    case 1 -> open.add(reading(gcm.decrypt(new ByteArrayInputStream(gcmSealed)), plain, got));
                    case 2 -> open.add(writing(ctr.withIv(iv(i)).encrypt(new CountingSink()), plain));
                    default -> open.add(reading(ctr.decrypt(new ByteArrayInputStream(ctrSealed)), plain, got));
                }
            }
            long now = heapAfterFullCollection();
            System.out.println("held-" + kinds[k] + ": "
                    + (now - last) / ((count - k + kinds.length - 1) / kinds.length));
            last = now;
        }
        long held = heapAfterFullCollection();
        String humongousOpen = lastHumongousRegions(gcLog);
        // at the start of every collection since: what was allocated meanwhile, short-lived buffers too
        List<Integer> since = humongousCounts(gcLog).subList(collectionsBefore, humongousCounts(gcLog).size());
        int humongousMax = since.stream().mapToInt(Integer::intValue).max().orElse(-1);
        int threadsOpen = ManagementFactory.getThreadMXBean().getThreadCount();
        System.out.println("streams: " + open.size());
        System.out.println("batch-chunks: " + GcmInternals.BATCH_CHUNKS);
        System.out.println("heap-before: " + before);
        System.out.println("heap-open: " + held);
        System.out.println("humongous-before: " + humongousBefore);
        System.out.println("humongous-open: " + humongousOpen);
        System.out.println("humongous-max: " + humongousMax);
        System.out.println("threads-before: " + threadsBefore);
        System.out.println("threads-open: " + threadsOpen);
        System.out.println("workers-open: " + Workers.liveThreads());
        System.out.println("workers-max: " + Workers.MAX_THREADS);
        for (Closeable c : open) {
            c.close();
        }
    }

    /** A fresh IV for the CTR writer {@code i} (the readers use the all-zero one). */
    private static byte[] iv(int i) {
        byte[] iv = new byte[16];
        iv[0] = 1;
        iv[12] = (byte) (i >>> 24);
        iv[13] = (byte) (i >>> 16);
        iv[14] = (byte) (i >>> 8);
        iv[15] = (byte) i;
        return iv;
    }

    /** A stream with {@link #WRITTEN} bytes written in 64 KiB and 1 MiB writes, left open. */
    private static OutputStream writing(OutputStream out, byte[] plain) throws IOException {
        int off = 0;
        for (int n : new int[] {65536, 1 << 20, WRITTEN - 65536 - (1 << 20)}) {
            out.write(plain, off, n);
            off += n;
        }
        return out;
    }

    /** A stream with {@link #READ} bytes read in 64 KiB reads and checked, left open. */
    private static InputStream reading(InputStream in, byte[] plain, byte[] got) throws IOException {
        int off = 0;
        while (off < READ) {
            int n = in.read(got, off, Math.min(65536, READ - off));
            if (n < 0) {
                throw new IOException("the message ended at " + off);
            }
            off += n;
        }
        if (!Arrays.equals(got, 0, READ, plain, 0, READ)) {
            throw new IOException("a reader read wrong bytes");
        }
        return in;
    }

    /**
     * The humongous regions after the last collection, from this JVM's own G1 log
     * ({@code -Xlog:gc+heap=info:file=...}, written as each collection ends).
     */
    private static String lastHumongousRegions(Path gcLog) throws IOException {
        Matcher m = Pattern.compile("Humongous regions: \\d+->(\\d+)").matcher(Files.readString(gcLog));
        String last = null;
        while (m.find()) {
            last = m.group(1);
        }
        if (last == null) {
            throw new IOException("no G1 heap log in " + gcLog
                    + ": run with -XX:+UseG1GC -Xlog:gc+heap=info:file=" + gcLog);
        }
        return last;
    }

    /** The humongous regions at the start of each collection so far, from this JVM's own G1 log. */
    private static List<Integer> humongousCounts(Path gcLog) throws IOException {
        Matcher m = Pattern.compile("Humongous regions: (\\d+)->\\d+").matcher(Files.readString(gcLog));
        List<Integer> counts = new ArrayList<>();
        while (m.find()) {
            counts.add(Integer.parseInt(m.group(1)));
        }
        return counts;
    }

    private static long heapAfterFullCollection() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Counts what is written, keeps nothing. */
    private static final class CountingSink extends OutputStream {
        long count;

        @Override
        public void write(int b) {
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            count += len;
        }
    }
}
