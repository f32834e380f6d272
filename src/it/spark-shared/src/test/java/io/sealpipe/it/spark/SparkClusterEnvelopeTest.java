package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.net.DelayingProxy;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Envelope mode ({@code sealpipe.fs.key.mode=envelope}) in a Spark job on {@code local-cluster}:
 * 1,000 sealed files written to {@code sfile://} by the executors and read back, their data keys
 * generated and unwrapped by Hadoop's KMS ({@link Kms}), which counts the calls itself (its
 * meters, read from its {@code /jmx}): at most 10 for the whole job with sealpipe's default
 * bounds (issue 42's target: see {@link #MAX_JOB_CALLS}), where an HDFS encryption zone makes
 * one {@code DECRYPT_EEK} per file created and one per file opened. The counter is checked
 * against what it must show: the key's creation as one admin call, one {@code GENERATE_EEK}
 * and at least one {@code DECRYPT_EEK} for each data key
 * found in the stored files (one envelope per data key), and the same read by a file system that
 * keeps no data key ({@code sealpipe.fs.data.key.read.keys=0}) as one {@code DECRYPT_EEK} per file
 * opened. Every stored file begins with the envelope's magic bytes. The counts and times of each
 * phase are written to {@code target/envelope-kms-calls.txt}.
 */
@Tag("cluster")
class SparkClusterEnvelopeTest {
    private static final String NAME = "envelope";
    private static final int FILES = 1000;
    private static final int LINES_PER_FILE = 4;
    /** The write's tasks: two for each executor. */
    private static final int WRITERS = 4;
    /**
     * Issue 42's target for the KMS calls of a job that writes 1,000 sealed files and reads them
     * back, 10. The job makes 8: 2 per writing JVM (its data key's GENERATE_EEK and DECRYPT_EEK)
     * for the two executors and the driver (the job's {@code _SUCCESS} marker is a sealed file
     * too), and 1 per executor for the other's data key.
     */
    private static final long MAX_JOB_CALLS = 10;
    /** The latency added to each KMS request in the timing, and its rounds after the warm-up. */
    private static final long DELAY_MILLIS = 20;
    private static final int DELAY_ROUNDS = Integer.getInteger("sealpipe.it.timing.rounds", 5);
    /** docs/FORMAT.md, "Envelope files": {@code \x89SPENV\r\n}. */
    private static final byte[] ENVELOPE_MAGIC = {(byte) 0x89, 0x53, 0x50, 0x45, 0x4E, 0x56, 0x0D, 0x0A};
    private static final int ENVELOPE_BYTES = 512;
    /** The requests the KMS served, as its meters name them (Kms#meters). */
    private static final List<String> SERVED = List.of("generate_eek", "decrypt_eek", "key", "admin", "reencrypt_eek",
            "reencrypt_eek_batch");
    /** A second sealed view of {@code file}, for the read that keeps no data key. */
    private static final String UNKEPT = "sfileunkept";

    private static Kms kms;

    private final Path dir = Cluster.home(NAME);
    private JavaSparkContext sc;

    @BeforeAll
    static void startKms() throws Exception {
        Path home = Cluster.home(NAME);
        EncryptionJob.deleteTree(home);
        kms = Kms.start(Files.createDirectories(home.resolve("kms")));
    }

    @AfterAll
    static void stopKms() throws Exception {
        if (kms != null) {
            kms.close();
        }
    }

    @AfterEach
    void stop() throws IOException {
        try {
            if (sc != null) {
                sc.stop();
            }
        } finally {
            FileSystem.closeAll();
            Cluster.keepLogs(dir, NAME);
        }
    }

    @Test
    void aThousandFilesWrittenAndReadBackCostAtMostTenKmsCalls() throws Exception {
        String key = "data-envelope";
        Map<String, Long> before = kms.meters();
        createKey(key);
        Map<String, Long> created = kms.meters();

        SparkSession spark = start(key);
        Path raw = dir.resolve("sealed");
        String sealed = "sfile://" + raw;
        List<String> expected = IntStream.range(0, FILES * LINES_PER_FILE).mapToObj(i -> "row " + i).sorted().toList();

        Map<String, Long> started = kms.meters();
        long t0 = System.nanoTime();
        write(spark, sealed);
        Map<String, Long> written = kms.meters();
        long t1 = System.nanoTime();
        Dataset<Row> back = spark.read().text(sealed);
        assertEquals(FILES, back.inputFiles().length, "files read back from " + sealed);
        assertEquals(expected, sorted(back.select("value").as(Encoders.STRING()).collectAsList()),
                "rows read back from " + sealed);
        Map<String, Long> read = kms.meters();
        long t2 = System.nanoTime();

        // The same read with sealpipe.fs.data.key.read.keys=0 (a read option, which Spark SQL
        // hands to the file system with the other Hadoop settings), in the same executors, through
        // a second sealed view of the same files: its file system is made with the option, while
        // sfile's, made before, keeps its data keys.
        Dataset<Row> unkept = spark.read()
                .option("fs." + UNKEPT + ".impl", SealedFileSystem.class.getName())
                .option(SealedFileSystem.wrapsKey(UNKEPT), "file")
                .option(SealedFileSystem.DATA_KEY_READ_KEYS, "0")
                .text(UNKEPT + "://" + raw);
        assertEquals(FILES, unkept.inputFiles().length, "files read back from " + UNKEPT + "://" + raw);
        assertEquals(expected, sorted(unkept.select("value").as(Encoders.STRING()).collectAsList()),
                "rows read back by " + UNKEPT + "://, keeping no data key");
        Map<String, Long> readUnkept = kms.meters();
        long t3 = System.nanoTime();

        Stored stored = stored(raw);
        Map<String, Long> creation = delta(before, created);
        Map<String, Long> starting = delta(created, started);
        Map<String, Long> control = delta(read, readUnkept);
        // Reads generate nothing, so the job's GENERATE_EEK are counted to the end: a request that
        // lands during the later reads (as the background refill of Hadoop's KMS client's queue
        // did, before sealpipe asked past it) is the job's too. Its other calls are all made by its
        // tasks.
        Map<String, Long> job = delta(started, read);
        job.put("generate_eek", readUnkept.get("generate_eek") - started.get("generate_eek"));
        StringBuilder report = new StringBuilder();
        report.append(line("create the key", creation, -1));
        report.append(line("start the context", starting, -1));
        report.append(line("write " + FILES + " files", delta(started, written), t1 - t0));
        report.append(line("read them back", delta(written, read), t2 - t1));
        report.append(line("the job (write and read back)", job, t2 - t0));
        report.append(line("read them back keeping no data key", control, t3 - t2));
        report.append(String.format("data keys in the %d stored files (distinct envelopes): %d%n", stored.files(),
                stored.dataKeys()));
        report.append("KMS calls: the requests the KMS served, by its meters (/jmx) ").append(SERVED)
                .append("; unauthenticated: its HTTP 401 answers (a new client's first request)\n");
        System.out.print(report);
        Files.writeString(Cluster.TARGET.resolve("envelope-kms-calls.txt"), report);

        assertEquals(FILES, stored.parts(), "part files under " + raw);
        assertEquals(0, delta(before, readUnkept).get("unauthorized"), "requests the KMS refused:\n" + report);
        // The counter counts: the key's creation is one admin call and nothing else; each data key
        // in the files was generated and unwrapped; a read that keeps no data key unwraps one per
        // file opened.
        assertEquals(1, creation.get("admin"), "the key's creation in the KMS's meters:\n" + report);
        assertEquals(1, served(creation), "the key's creation in the KMS's meters:\n" + report);
        assertEquals(0, served(starting), "KMS calls while the context started:\n" + report);
        assertTrue(stored.dataKeys() >= 1, "data keys in the stored files:\n" + report);
        assertEquals(stored.dataKeys(), job.get("generate_eek"), "a GENERATE_EEK for each data key:\n" + report);
        assertTrue(job.get("decrypt_eek") >= stored.dataKeys(), "a DECRYPT_EEK for each data key:\n" + report);
        assertTrue(control.get("decrypt_eek") >= FILES && control.get("decrypt_eek") <= FILES + MAX_JOB_CALLS,
                "a read keeping no data key: a DECRYPT_EEK per file opened (" + FILES + "):\n" + report);
        // The job really used the KMS, and within issue 42's bound.
        assertTrue(served(job) >= 2, "the job's KMS calls:\n" + report);
        assertTrue(stored.dataKeys() <= 3, "a data key per writing JVM at most:\n" + report);
        assertTrue(served(job) <= MAX_JOB_CALLS, "the job's KMS calls, at most " + MAX_JOB_CALLS + ":\n" + report);
    }

    /**
     * Issue 42's latency target, measured, not asserted (a time depends on the machine): the
     * 1,000 files read back by executors whose file system keeps no data key yet, with and without
     * {@value #DELAY_MILLIS} ms added to every request to the KMS (a {@link DelayingProxy} in front
     * of it), in alternating rounds after one warm-up; each round reads through a sealed view of
     * its own ({@code fs.sfileNAME.impl}, a read option), so each starts with no data key. The
     * times and their ratio go to {@code target/envelope-kms-delay.txt}. Not run by {@code
     * verify}: {@code -Dsealpipe.it.timing=true}, and {@code -Dsealpipe.it.timing.rounds=N} for
     * other than 5 rounds (src/it/README.md).
     */
    @Test
    @EnabledIfSystemProperty(named = "sealpipe.it.timing", matches = "true")
    void openingAThousandFilesWithTwentyMillisecondsAddedToEachKmsRequest() throws Exception {
        String key = "data-delay";
        createKey(key);
        SparkSession spark = start(key);
        Path raw = dir.resolve("delay");
        write(spark, "sfile://" + raw);
        long[] sums = new long[2];
        StringBuilder report = new StringBuilder();
        try (DelayingProxy proxy = new DelayingProxy(kms.port(), DELAY_MILLIS)) {
            String delayed = "kms://http@127.0.0.1:" + proxy.port() + "/kms";
            for (int round = 0; round <= DELAY_ROUNDS; round++) { // round 0 warms up, uncounted
                for (int which = 0; which < 2; which++) {
                    boolean delay = (round + which) % 2 == 1; // alternate which goes first
                    String view = "sfile" + (delay ? "delayed" : "direct") + round;
                    Map<String, Long> before = kms.meters();
                    long connections = proxy.connections();
                    long start = System.nanoTime();
                    long rows = spark.read()
                            .option("fs." + view + ".impl", SealedFileSystem.class.getName())
                            .option(SealedFileSystem.wrapsKey(view), "file")
                            .option(SealedFileSystem.KEY_PROVIDER_PATH, delay ? delayed : kms.providerUri())
                            .text(view + "://" + raw).count();
                    long millis = (System.nanoTime() - start) / 1_000_000;
                    Map<String, Long> calls = delta(before, kms.meters());
                    assertEquals(FILES * LINES_PER_FILE, rows, "rows read back through " + view);
                    assertTrue(calls.get("decrypt_eek") >= 2, "the read through " + view
                            + " unwrapped its data keys, in each executor: " + calls.get("decrypt_eek"));
                    assertEquals(delay, proxy.connections() > connections, "the KMS requests of the read through "
                            + view + " went through the proxy: " + delay);
                    if (round > 0) {
                        sums[delay ? 1 : 0] += millis;
                    }
                    report.append(String.format("round %d, %-16s %6d ms, %d DECRYPT_EEK%n", round,
                            delay ? DELAY_MILLIS + " ms added:" : "direct:", millis, calls.get("decrypt_eek")));
                }
            }
        }
        report.append(String.format("%d files read back by 2 executors keeping no data key yet, %d rounds after one"
                + " warm-up: direct %d ms, with %d ms added to each KMS request %d ms: %.3f x%n", FILES, DELAY_ROUNDS,
                sums[0], DELAY_MILLIS, sums[1], (double) sums[1] / sums[0]));
        System.out.print(report);
        Files.writeString(Cluster.TARGET.resolve("envelope-kms-delay.txt"), report);
    }

    private static void createKey(String key) throws Exception {
        KeyProvider provider = KeyProviderFactory.get(URI.create(kms.providerUri()), new Configuration(false));
        try {
            provider.createKey(key, new KeyProvider.Options(new Configuration(false)).setBitLength(256));
            provider.flush();
        } finally {
            provider.close();
        }
    }

    /** The cluster, its {@code sfile://} sealed in envelope mode under {@code key}. */
    private SparkSession start(String key) throws Exception {
        sc = Cluster.start(Cluster.conf(NAME, dir)
                .set("spark.hadoop.fs.sfile.impl", SealedFileSystem.class.getName())
                .set("spark.hadoop." + SealedFileSystem.wrapsKey("sfile"), "file")
                .set("spark.hadoop." + SealedFileSystem.KEY_PROVIDER_PATH, kms.providerUri())
                .set("spark.hadoop." + SealedFileSystem.KEY_NAME, key)
                .set("spark.hadoop." + SealedFileSystem.KEY_MODE, "envelope"), dir);
        return SparkSession.builder().getOrCreate();
    }

    /** 1,000 files from a few tasks: each task starts a new file every LINES_PER_FILE rows. */
    private static void write(SparkSession spark, String sealed) {
        spark.range(0, FILES * LINES_PER_FILE, 1, WRITERS).selectExpr("concat('row ', id) AS line")
                .write().option("maxRecordsPerFile", LINES_PER_FILE).text(sealed);
    }

    /** One phase's line of the report; {@code nanos} its time, or -1. */
    private static String line(String phase, Map<String, Long> calls, long nanos) {
        return String.format("%-38s %5d KMS calls (GENERATE_EEK %d, DECRYPT_EEK %d, other %d; unauthenticated %d)%s%n",
                phase + ":", served(calls), calls.get("generate_eek"), calls.get("decrypt_eek"),
                served(calls) - calls.get("generate_eek") - calls.get("decrypt_eek"), calls.get("unauthenticated"),
                nanos < 0 ? "" : String.format(", %.1f s", nanos / 1e9));
    }

    /** The stored files under {@code raw} (the local file system's {@code .crc} files aside). */
    private record Stored(int files, int parts, int dataKeys) {}

    /**
     * Checks that every stored file under {@code raw} begins with the envelope's magic bytes; counts
     * the part files and the data keys (files sealed under one data key share its envelope).
     */
    private static Stored stored(Path raw) throws IOException {
        List<Path> files;
        try (Stream<Path> all = Files.walk(raw)) {
            files = all.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().endsWith(".crc")).sorted()
                    .toList();
        }
        Set<ByteBuffer> envelopes = new HashSet<>();
        int parts = 0;
        for (Path file : files) {
            byte[] envelope;
            try (InputStream in = Files.newInputStream(file)) {
                envelope = in.readNBytes(ENVELOPE_BYTES);
            }
            assertTrue(envelope.length == ENVELOPE_BYTES, file + ": " + envelope.length + " bytes, not an envelope's "
                    + ENVELOPE_BYTES);
            assertArrayEquals(ENVELOPE_MAGIC, Arrays.copyOf(envelope, ENVELOPE_MAGIC.length),
                    file + " begins with the envelope's magic bytes");
            envelopes.add(ByteBuffer.wrap(envelope));
            if (file.getFileName().toString().startsWith("part-")) {
                parts++;
            }
        }
        return new Stored(files.size(), parts, envelopes.size());
    }

    /** The requests the KMS served in {@code calls}. */
    private static long served(Map<String, Long> calls) {
        return SERVED.stream().mapToLong(calls::get).sum();
    }

    /** Each meter's growth from {@code from} to {@code to}. */
    private static Map<String, Long> delta(Map<String, Long> from, Map<String, Long> to) {
        Map<String, Long> delta = new LinkedHashMap<>();
        for (String meter : to.keySet()) {
            delta.put(meter, to.get(meter) - from.get(meter));
        }
        return delta;
    }

    private static List<String> sorted(List<String> lines) {
        List<String> copy = new ArrayList<>(lines);
        copy.sort(null);
        return copy;
    }
}
