package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealedFileSystem;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.input.TextInputFormat;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Envelope mode ({@code sealpipe.fs.key.mode=envelope}) in a Spark job on {@code local-cluster}:
 * 1,000 sealed files written to {@code sfile://} by the executors and read back, their data keys
 * generated and unwrapped by Hadoop's KMS ({@link Kms}), which counts the calls itself (its
 * meters, read from its {@code /jmx}): at most 10 for the whole job with sealpipe's default
 * bounds (issue 42), where an HDFS encryption zone makes one {@code DECRYPT_EEK} per file created
 * and one per file opened. The counter is checked both ways: the key's creation shows up as one
 * admin call, and the same read by a file system that keeps no data key ({@code
 * sealpipe.fs.data.key.read.keys=0}) costs one {@code DECRYPT_EEK} per file opened. Every stored
 * file begins with the envelope's magic bytes. The counts of each phase are written to {@code
 * target/envelope-kms-calls.txt}.
 */
@Tag("cluster")
class SparkClusterEnvelopeTest {
    private static final String NAME = "envelope";
    private static final int FILES = 1000;
    private static final int LINES_PER_FILE = 4;
    /** Issue 42: the KMS calls of a job that writes 1,000 sealed files and reads them back. */
    private static final long MAX_JOB_CALLS = 10;
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
            org.apache.hadoop.fs.FileSystem.closeAll();
            Cluster.keepLogs(dir, NAME);
        }
    }

    @Test
    void aThousandFilesWrittenAndReadBackCostAtMostTenKmsCalls() throws Exception {
        String key = "data-envelope";
        Map<String, Long> before = kms.meters();
        KeyProvider provider = KeyProviderFactory.get(URI.create(kms.providerUri()), new Configuration(false));
        try {
            provider.createKey(key, new KeyProvider.Options(new Configuration(false)).setBitLength(256));
            provider.flush();
        } finally {
            provider.close();
        }
        Map<String, Long> created = kms.meters();
        // The counter counts: the key's creation is one admin call, and nothing else.
        Map<String, Long> creation = delta(before, created);
        assertEquals(1, creation.get("admin"), "the key's creation in the KMS's meters: " + creation);
        assertEquals(1, served(creation), "the key's creation in the KMS's meters: " + creation);

        sc = Cluster.start(Cluster.conf(NAME, dir)
                .set("spark.hadoop.fs.sfile.impl", SealedFileSystem.class.getName())
                .set("spark.hadoop." + SealedFileSystem.wrapsKey("sfile"), "file")
                .set("spark.hadoop." + SealedFileSystem.KEY_PROVIDER_PATH, kms.providerUri())
                .set("spark.hadoop." + SealedFileSystem.KEY_NAME, key)
                .set("spark.hadoop." + SealedFileSystem.KEY_MODE, "envelope"), dir);
        Path raw = dir.resolve("sealed");
        String sealed = "sfile://" + raw;
        List<String> expected = IntStream.range(0, FILES * LINES_PER_FILE).mapToObj(i -> "row " + i).sorted().toList();

        Map<String, Long> started = kms.meters();
        sc.parallelize(IntStream.range(0, FILES * LINES_PER_FILE).boxed().toList(), FILES)
                .map(i -> "row " + i)
                .saveAsTextFile(sealed);
        Map<String, Long> written = kms.meters();
        JavaRDD<String> lines = sc.textFile(sealed);
        assertEquals(FILES, lines.getNumPartitions(), "splits of " + sealed + ": one per file");
        assertEquals(expected, sorted(lines.collect()), "rows read back from " + sealed);
        Map<String, Long> read = kms.meters();

        Stored stored = stored(raw);
        assertEquals(FILES, stored.parts(), "part files under " + raw);

        // The same read by a sealed view that keeps no data key, in the same executors: one
        // DECRYPT_EEK per file opened.
        Configuration unkept = new Configuration(sc.hadoopConfiguration());
        unkept.set("fs." + UNKEPT + ".impl", SealedFileSystem.class.getName());
        unkept.set(SealedFileSystem.wrapsKey(UNKEPT), "file");
        unkept.setInt(SealedFileSystem.DATA_KEY_READ_KEYS, 0);
        JavaRDD<String> unkeptLines = sc.newAPIHadoopFile(UNKEPT + "://" + raw, TextInputFormat.class,
                LongWritable.class, Text.class, unkept).map(line -> line._2().toString());
        assertEquals(FILES, unkeptLines.getNumPartitions(), "splits of " + UNKEPT + "://" + raw + ": one per file");
        assertEquals(expected, sorted(unkeptLines.collect()), "rows read back by " + UNKEPT);
        Map<String, Long> readUnkept = kms.meters();

        Map<String, Map<String, Long>> phases = new LinkedHashMap<>();
        phases.put("create the key", creation);
        phases.put("start the context", delta(created, started));
        phases.put("write " + FILES + " files", delta(started, written));
        phases.put("read them back", delta(written, read));
        phases.put("read them back, keeping no data key", delta(read, readUnkept));
        // Hadoop's KMS client asks for new data keys in batches (KMSClientProvider's ValueQueue):
        // a JVM's first GENERATE_EEK fills its queue, and a second one, asynchronous, refills it
        // at once. Reads generate nothing, so the job's GENERATE_EEK are counted to the end: a
        // refill that lands during the later reads is the job's too. Every other call of the job
        // is made before its last task ends.
        Map<String, Long> job = delta(started, read);
        job.put("generate_eek", readUnkept.get("generate_eek") - started.get("generate_eek"));
        StringBuilder report = new StringBuilder();
        phases.forEach((phase, calls) -> report.append(line(phase, calls)));
        report.append(line("the job (write and read back)", job));
        report.append(String.format("data keys in the %d stored files (distinct envelopes): %d%n", stored.files(),
                stored.dataKeys()));
        report.append("KMS calls: the requests the KMS served, by its meters ").append(SERVED)
                .append("; unauthenticated: its HTTP 401 answers (a new client's first request)\n");
        System.out.print(report);
        Files.writeString(Cluster.TARGET.resolve("envelope-kms-calls.txt"), report);

        assertEquals(0, delta(before, readUnkept).get("unauthorized"), "requests the KMS refused:\n" + report);
        assertEquals(0, served(phases.get("start the context")), "KMS calls while the context started:\n" + report);
        // The job really used the KMS: a writing JVM generates a data key, then has it unwrapped.
        assertTrue(job.get("generate_eek") >= 1 && job.get("decrypt_eek") >= 1 && served(job) >= 2,
                "the job's KMS calls:\n" + report);
        assertTrue(served(job) <= MAX_JOB_CALLS, "the job's KMS calls, at most " + MAX_JOB_CALLS + ":\n" + report);
        // The counter counts: a read that keeps no data key costs one DECRYPT_EEK per file opened.
        Map<String, Long> control = phases.get("read them back, keeping no data key");
        assertTrue(control.get("decrypt_eek") >= FILES && control.get("decrypt_eek") <= FILES + MAX_JOB_CALLS,
                "a read keeping no data key: one DECRYPT_EEK per file opened (" + FILES + "):\n" + report);
    }

    private static String line(String phase, Map<String, Long> calls) {
        return String.format("%-40s %5d KMS calls (GENERATE_EEK %d, DECRYPT_EEK %d, other %d; unauthenticated %d)%n",
                phase + ":", served(calls), calls.get("generate_eek"), calls.get("decrypt_eek"),
                served(calls) - calls.get("generate_eek") - calls.get("decrypt_eek"), calls.get("unauthenticated"));
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
            assertArrayEquals(ENVELOPE_MAGIC, java.util.Arrays.copyOf(envelope, ENVELOPE_MAGIC.length),
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
