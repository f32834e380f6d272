package io.sealpipe.it.spark;

import com.sun.management.OperatingSystemMXBean;
import io.sealpipe.it.spark.EncryptionJob.Encryption;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.crypto.cipher.CryptoCipher;
import org.apache.commons.crypto.cipher.CryptoCipherFactory;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Times {@link EncryptionJob} with encryption off, on Commons Crypto's default cipher list (what
 * Spark uses when {@code cipher.classes} is not set) and on sealpipe's cipher: a warm-up round,
 * then {@code sealpipe.it.timing.rounds} rounds (default 9) in one JVM, each round running the
 * three in a rotated order so that none is always first or last. The job's wall time and the
 * JVM's CPU time during it (less sensitive to other work on the machine), not the context's
 * start and stop. Not part of {@code mvn verify} (its name is not a test's, and
 * it runs only with {@code -Dsealpipe.it.timing=true}):
 *
 * <pre>
 * mvn -B -ntp test -Dtest=SparkIoEncryptionTiming -Dsealpipe.it.timing=true
 * </pre>
 *
 * <p>from the project's folder once {@code mvn verify} at the top has installed sealpipe (in
 * {@code target/it/<project>}, where {@code @project.version@} is filled in). The figures go to
 * standard output and {@code target/spark-io-encryption-timing.txt}.
 */
@EnabledIfSystemProperty(named = "sealpipe.it.timing", matches = "true")
class SparkIoEncryptionTiming {
    private static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target"));
    private static final OperatingSystemMXBean CPU =
            (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    @Test
    void timeTheJob() throws Exception {
        int rounds = Integer.getInteger("sealpipe.it.timing.rounds", 9);
        Encryption[] modes = Encryption.values();
        int[] table = EncryptionJob.table();
        List<String> out = new ArrayList<>();
        try (CryptoCipher c = CryptoCipherFactory.getCryptoCipher("AES/CTR/NoPadding", new Properties())) {
            out.add("Commons Crypto's default cipher list gives " + c.getClass().getName());
        }
        out.add("records " + EncryptionJob.MAP_PARTITIONS * EncryptionJob.RECORDS_PER_PARTITION + ", keys "
                + EncryptionJob.KEYS + ", rounds " + rounds + " after one warm-up round; job wall time, ms");

        Map<Encryption, long[]> wall = new EnumMap<>(Encryption.class);
        Map<Encryption, long[]> cpu = new EnumMap<>(Encryption.class);
        for (Encryption mode : modes) {
            wall.put(mode, new long[rounds]);
            cpu.put(mode, new long[rounds]);
        }
        IoBytes bytes = new IoBytes();
        for (int round = -1; round < rounds; round++) {
            StringBuilder line = new StringBuilder(round < 0 ? "warm-up" : "round " + (round + 1))
                    .append(" (wall/cpu):");
            for (int i = 0; i < modes.length; i++) {
                Encryption mode = modes[Math.floorMod(i + round, modes.length)];
                long[] ms = time(mode, table, round < 0 && mode == Encryption.SEALPIPE ? bytes : null);
                if (round >= 0) {
                    wall.get(mode)[round] = ms[0];
                    cpu.get(mode)[round] = ms[1];
                }
                line.append(' ').append(mode).append(' ').append(ms[0]).append('/').append(ms[1]);
            }
            out.add(line.toString());
            System.out.println(line);
        }
        out.add(String.format("bytes through IO encryption per job: about %d MB (task metrics) + %d MB of"
                + " DISK_ONLY blocks written", bytes.total.get() >> 20, bytes.diskBlocks.get() >> 20));

        for (String kind : List.of("wall", "cpu")) {
            Map<Encryption, long[]> t = kind.equals("wall") ? wall : cpu;
            for (Encryption mode : modes) {
                long[] sorted = t.get(mode).clone();
                Arrays.sort(sorted);
                out.add(String.format("%s %-8s median %6d  min %6d  max %6d", kind, mode, median(sorted), sorted[0],
                        sorted[sorted.length - 1]));
            }
            out.add(paired(kind + " DEFAULT - OFF", t.get(Encryption.DEFAULT), t.get(Encryption.OFF)));
            out.add(paired(kind + " SEALPIPE - OFF", t.get(Encryption.SEALPIPE), t.get(Encryption.OFF)));
            out.add(paired(kind + " DEFAULT - SEALPIPE", t.get(Encryption.DEFAULT), t.get(Encryption.SEALPIPE)));
        }
        out.forEach(System.out::println);
        Files.write(TARGET.resolve("spark-io-encryption-timing.txt"), out);
    }

    /** The job's wall time and the JVM's CPU time during it (all threads: tasks, GC, JIT), in ms. */
    private static long[] time(Encryption mode, int[] table, IoBytes bytes) throws IOException {
        Path dir = TARGET.resolve("spark-local/timing-" + mode.name().toLowerCase());
        EncryptionJob.deleteTree(dir);
        System.gc();
        try (JavaSparkContext sc = new JavaSparkContext(EncryptionJob.conf("timing-" + mode, mode, dir))) {
            if (bytes != null) {
                sc.sc().addSparkListener(bytes);
            }
            long cpu = CPU.getProcessCpuTime();
            long start = System.nanoTime();
            EncryptionJob.Result result = EncryptionJob.run(sc, table);
            long wall = System.nanoTime() - start;
            cpu = CPU.getProcessCpuTime() - cpu;
            if (bytes != null) {
                bytes.diskBlocks.set(result.diskSize());
            }
            return new long[] {wall / 1_000_000, cpu / 1_000_000};
        }
    }

    /**
     * The bytes a job sends through IO encryption, from its task metrics: shuffle written and
     * read, spills written and read back, the DISK_ONLY blocks written and read (as input).
     */
    static final class IoBytes extends SparkListener {
        final AtomicLong total = new AtomicLong();
        final AtomicLong diskBlocks = new AtomicLong();

        @Override
        public void onTaskEnd(SparkListenerTaskEnd taskEnd) {
            TaskMetrics m = taskEnd.taskMetrics();
            if (m != null) {
                total.addAndGet(m.shuffleWriteMetrics().bytesWritten() + m.shuffleReadMetrics().totalBytesRead()
                        + 2 * m.diskBytesSpilled() + m.inputMetrics().bytesRead());
            }
        }
    }

    /** The median of the per-round differences, with their smallest and largest. */
    private static String paired(String name, long[] a, long[] b) {
        long[] d = new long[a.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = a[i] - b[i];
        }
        Arrays.sort(d);
        return String.format("%-23s per round: median %+6d  min %+6d  max %+6d", name, median(d), d[0], d[d.length - 1]);
    }

    private static long median(long[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
