package io.sealpipe.it.spark;

import io.sealpipe.it.spark.EncryptionJob.Encryption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.commons.crypto.cipher.CryptoCipher;
import org.apache.commons.crypto.cipher.CryptoCipherFactory;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Times {@link EncryptionJob} with encryption off, on Commons Crypto's default cipher list (what
 * Spark uses when {@code cipher.classes} is not set) and on sealpipe's cipher: a warm-up round,
 * then {@code sealpipe.it.timing.rounds} rounds (default 9) in one JVM, each round running the
 * three in a rotated order so that none is always first or last. The job's wall time only (not
 * the context's start and stop). Not part of {@code mvn verify} (its name is not a test's, and
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

        Map<Encryption, long[]> millis = new EnumMap<>(Encryption.class);
        for (Encryption mode : modes) {
            millis.put(mode, new long[rounds]);
        }
        for (int round = -1; round < rounds; round++) {
            StringBuilder line = new StringBuilder(round < 0 ? "warm-up" : "round " + (round + 1)).append(':');
            for (int i = 0; i < modes.length; i++) {
                Encryption mode = modes[Math.floorMod(i + round, modes.length)];
                long ms = time(mode, table);
                if (round >= 0) {
                    millis.get(mode)[round] = ms;
                }
                line.append(' ').append(mode).append(' ').append(ms);
            }
            out.add(line.toString());
            System.out.println(line);
        }

        for (Encryption mode : modes) {
            long[] t = millis.get(mode).clone();
            Arrays.sort(t);
            out.add(String.format("%-8s median %6d  min %6d  max %6d", mode, median(t), t[0], t[t.length - 1]));
        }
        out.add(paired("DEFAULT - OFF", millis.get(Encryption.DEFAULT), millis.get(Encryption.OFF)));
        out.add(paired("SEALPIPE - OFF", millis.get(Encryption.SEALPIPE), millis.get(Encryption.OFF)));
        out.add(paired("DEFAULT - SEALPIPE", millis.get(Encryption.DEFAULT), millis.get(Encryption.SEALPIPE)));
        out.forEach(System.out::println);
        Files.write(TARGET.resolve("spark-io-encryption-timing.txt"), out);
    }

    private static long time(Encryption mode, int[] table) throws IOException {
        Path dir = TARGET.resolve("spark-local/timing-" + mode.name().toLowerCase());
        EncryptionJob.deleteTree(dir);
        System.gc();
        try (JavaSparkContext sc = new JavaSparkContext(EncryptionJob.conf("timing-" + mode, mode, dir))) {
            long start = System.nanoTime();
            EncryptionJob.run(sc, table);
            return (System.nanoTime() - start) / 1_000_000;
        }
    }

    /** The median of the per-round differences, with their smallest and largest. */
    private static String paired(String name, long[] a, long[] b) {
        long[] d = new long[a.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = a[i] - b[i];
        }
        Arrays.sort(d);
        return String.format("%-18s per round: median %+6d  min %+6d  max %+6d", name, median(d), d[0], d[d.length - 1]);
    }

    private static long median(long[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
