package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.CtrStreams;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.io.CompressionCodec;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.slf4j.LoggerFactory;

/**
 * Spark's IO encryption on sealpipe's Commons Crypto cipher, in a local-mode job: shuffles with
 * forced spills, a broadcast, a {@code DISK_ONLY} RDD read back. The job gives the same result
 * as without encryption, sealpipe's engine is chosen during the encrypted run and not before
 * (its log line, written by log4j2 to {@code target/sealpipe-it.log}), the files Spark wrote
 * decrypt with sealpipe's own {@link CtrStreams} under Spark's key, and a cipher list naming a
 * class that does not exist fails the job (Commons Crypto does not fall back from an explicit
 * list).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkIoEncryptionTest {
    private static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target"));
    private static final Path LOG = Path.of(System.getProperty("sealpipe.it.log", "target/sealpipe-it.log"));
    private static final String ENGINE_LINE = "sealpipe engine ";
    private static final int IV_LENGTH = 16;

    /**
     * Starts log4j2 (a logger from SLF4J makes its context), which empties the log file ({@code
     * append = false}): the file then holds this JVM's lines only. Nothing is logged here: the
     * file takes every {@code io.sealpipe} logger, this package's too.
     */
    @BeforeAll
    static void startLogging() {
        LoggerFactory.getLogger(SparkIoEncryptionTest.class);
    }

    /** The runs need one JVM in order: the plain run first, which must not touch sealpipe. */
    @Test
    @Order(1)
    void encryptedJobOnSealpipeGivesThePlainResult() throws Exception {
        int[] table = EncryptionJob.table();
        long[] expected = EncryptionJob.expected(table);

        assertEquals(List.of(), sealpipeLines(), "sealpipe logged before any Spark job");
        Outcome plain = run("plain", false, table, (sc, dir, result) -> {
            assertEquals(List.of(), sealpipeLines(), "sealpipe logged in a job without encryption");
            checkPlainFiles(sc, dir, result);
        });
        Outcome sealed = run("sealpipe", true, table, (sc, dir, result) -> {
            List<String> engine = sealpipeLines().stream().filter(l -> l.startsWith(ENGINE_LINE)).toList();
            assertEquals(1, engine.size(), "sealpipe's engine line once, in the encrypted run: " + sealpipeLines());
            checkEncryptedFiles(sc, dir, result); // CtrStreams: after the check of the engine line
        });
        System.out.println("sealpipe's log lines (" + LOG + "):");
        sealpipeLines().forEach(l -> System.out.println("  " + l));

        for (Outcome o : List.of(plain, sealed)) {
            String run = o.name + ": ";
            assertEquals(expected[1], o.result.count(), run + "distinct keys");
            assertEquals(expected[0], o.result.total(), run + "sum of the values");
            assertEquals(EncryptionJob.REDUCE_PARTITIONS, o.result.summaries().size(), run + "partitions");
            long records = 0;
            int previousLast = -1;
            for (EncryptionJob.Summary s : o.result.summaries()) {
                assertTrue(s.sorted(), run + "partition " + s.partition() + " sorted");
                assertTrue(s.records() == 0 || s.firstKey() > previousLast, run + "partitions in key order");
                previousLast = s.records() == 0 ? previousLast : s.lastKey();
                records += s.records();
            }
            assertEquals(o.result.count(), records, run + "records read back from the DISK_ONLY copy");
            assertTrue(o.result.diskSize() > 0 && o.result.memSize() == 0,
                    run + "DISK_ONLY blocks on disk only: " + o.result.diskSize() + " / " + o.result.memSize());
            assertTrue(o.diskBytesSpilled > 0 && o.memoryBytesSpilled > 0,
                    run + "spilled: " + o.memoryBytesSpilled + " bytes in memory, " + o.diskBytesSpilled + " on disk");
        }
        assertEquals(plain.result.summaries(), sealed.result.summaries(), "per-partition summaries");
    }

    /** An explicit cipher list that cannot load fails the job instead of falling back to JCE. */
    @Test
    @Order(2)
    void missingCipherClassFailsTheJob() {
        String missing = "io.sealpipe.it.spark.NoSuchCipher";
        Path dir = TARGET.resolve("spark-local/missing-cipher");
        EncryptionJob.deleteTree(dir);
        try (JavaSparkContext sc = new JavaSparkContext(EncryptionJob.conf("missing-cipher", true, missing, dir))) {
            Exception e = assertThrows(Exception.class, () -> EncryptionJob.smallShuffle(sc));
            String all = messages(e);
            assertTrue(all.contains(missing) && all.contains("is not available"),
                    "the failure names the missing cipher class: " + all);
        }
    }

    private interface WhileAlive {
        void check(JavaSparkContext sc, Path localDir, EncryptionJob.Result result) throws Exception;
    }

    private record Outcome(String name, EncryptionJob.Result result, long memoryBytesSpilled, long diskBytesSpilled) {}

    /** One context: the job, then {@code check} while its files are on disk, then stop. */
    private static Outcome run(String name, boolean encrypted, int[] table, WhileAlive check) throws Exception {
        Path dir = TARGET.resolve("spark-local/" + name);
        EncryptionJob.deleteTree(dir);
        String cipher = encrypted ? EncryptionJob.SEALPIPE_CIPHER : null;
        EncryptionJob.SpillListener spills = new EncryptionJob.SpillListener();
        EncryptionJob.Result result;
        try (JavaSparkContext sc = new JavaSparkContext(EncryptionJob.conf(name, encrypted, cipher, dir))) {
            sc.sc().addSparkListener(spills);
            long start = System.nanoTime();
            result = EncryptionJob.run(sc, table);
            System.out.printf("%s: job %d ms%n", name, (System.nanoTime() - start) / 1_000_000);
            check.check(sc, dir, result);
        } // stop() delivers the listener events still queued
        System.out.printf("%s: spilled %d bytes from memory, %d bytes to disk%n", name,
                spills.memoryBytesSpilled.get(), spills.diskBytesSpilled.get());
        return new Outcome(name, result, spills.memoryBytesSpilled.get(), spills.diskBytesSpilled.get());
    }

    /** Without encryption: the shuffle segments decompress as they are, the disk blocks deserialize. */
    private static void checkPlainFiles(JavaSparkContext sc, Path dir, EncryptionJob.Result result) throws IOException {
        CompressionCodec codec = CompressionCodec.createCodec(sc.getConf());
        List<byte[]> segments = shuffleSegments(dir);
        assertFalse(segments.isEmpty(), "shuffle files under " + dir);
        for (byte[] segment : segments) {
            assertTrue(decompress(codec, new ByteArrayInputStream(segment)) > 0);
        }
        assertEquals(result.count(), diskBlockRecords(dir, null));
    }

    /**
     * With encryption: each shuffle segment and disk block is Spark's 16-byte IV and then AES-CTR
     * under Spark's key, which sealpipe's CtrStreams decrypts (LZ4's checksums and Java
     * serialization check the result); the raw bytes neither decompress nor deserialize.
     */
    private static void checkEncryptedFiles(JavaSparkContext sc, Path dir, EncryptionJob.Result result)
            throws IOException {
        byte[] key = SparkEnv.get().securityManager().getIOEncryptionKey().get();
        CompressionCodec codec = CompressionCodec.createCodec(sc.getConf());
        List<byte[]> segments = shuffleSegments(dir);
        assertFalse(segments.isEmpty(), "shuffle files under " + dir);
        long plaintext = 0;
        for (byte[] segment : segments) {
            assertThrows(IOException.class, () -> decompress(codec, new ByteArrayInputStream(segment)),
                    "a ciphertext segment decompressed");
            long n = decompress(codec, decrypt(key, segment));
            assertTrue(n > 0);
            plaintext += n;
        }
        System.out.printf("sealpipe: %d shuffle segments decrypted with CtrStreams (%d bytes uncompressed)%n",
                segments.size(), plaintext);
        assertThrows(IOException.class, () -> diskBlockRecords(dir, null), "a ciphertext disk block deserialized");
        assertEquals(result.count(), diskBlockRecords(dir, key));
    }

    private static InputStream decrypt(byte[] key, byte[] ivAndCiphertext) {
        byte[] iv = Arrays.copyOf(ivAndCiphertext, IV_LENGTH);
        CtrStreams ctr = CtrStreams.builder().key(key).iv(iv).build();
        return ctr.decrypt(new ByteArrayInputStream(ivAndCiphertext, IV_LENGTH, ivAndCiphertext.length - IV_LENGTH));
    }

    private static long decompress(CompressionCodec codec, InputStream in) throws IOException {
        try (InputStream plain = codec.compressedInputStream(in)) {
            return plain.transferTo(OutputStream.nullOutputStream());
        }
    }

    /** The non-empty partition segments of every shuffle data file, by its index file. */
    private static List<byte[]> shuffleSegments(Path dir) throws IOException {
        List<byte[]> segments = new ArrayList<>();
        // Spark hashes each file's name to a subfolder: a data file and its index are in different ones.
        Map<String, Path> data = new HashMap<>();
        for (Path file : EncryptionJob.files(dir, "shuffle_\\d+_\\d+_\\d+\\.data")) {
            data.put(file.getFileName().toString(), file);
        }
        for (Path index : EncryptionJob.files(dir, "shuffle_\\d+_\\d+_\\d+\\.index")) {
            String name = index.getFileName().toString().replace(".index", ".data");
            assertTrue(data.containsKey(name), name + " under " + dir);
            byte[] bytes = Files.readAllBytes(data.get(name));
            long[] offsets;
            try (DataInputStream in = new DataInputStream(Files.newInputStream(index))) {
                offsets = new long[(int) (Files.size(index) / Long.BYTES)];
                for (int i = 0; i < offsets.length; i++) {
                    offsets[i] = in.readLong();
                }
            }
            assertEquals(bytes.length, offsets[offsets.length - 1], "the index covers " + name);
            for (int i = 0; i + 1 < offsets.length; i++) {
                if (offsets[i + 1] > offsets[i]) {
                    segments.add(Arrays.copyOfRange(bytes, (int) offsets[i], (int) offsets[i + 1]));
                }
            }
        }
        return segments;
    }

    /** The records in the RDD blocks on disk, decrypted with {@code key} unless it is null. */
    private static long diskBlockRecords(Path dir, byte[] key) throws IOException {
        List<Path> blocks = EncryptionJob.files(dir, "rdd_\\d+_\\d+");
        assertEquals(EncryptionJob.REDUCE_PARTITIONS, blocks.size(), "DISK_ONLY blocks under " + dir);
        long records = 0;
        for (Path block : blocks) {
            byte[] bytes = Files.readAllBytes(block);
            try (InputStream in = key == null ? new ByteArrayInputStream(bytes) : decrypt(key, bytes)) {
                var values = SparkEnv.get().serializer().newInstance().deserializeStream(in).asIterator();
                while (values.hasNext()) {
                    values.next();
                    records++;
                }
            } catch (RuntimeException e) {
                throw new IOException("cannot read " + block, e);
            }
        }
        return records;
    }

    private static List<String> sealpipeLines() throws IOException {
        return Files.exists(LOG) ? Files.readAllLines(LOG) : List.of();
    }

    private static String messages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t).append('\n');
        }
        return all.toString();
    }
}
