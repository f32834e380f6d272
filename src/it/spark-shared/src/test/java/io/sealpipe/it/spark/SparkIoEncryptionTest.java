package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.io.CompressionCodec;
import org.apache.spark.storage.BlockManager;
import org.apache.spark.storage.BlockStatus;
import org.apache.spark.storage.BroadcastBlockId;
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
 * decrypt with the JDK's SunJCE AES/CTR under Spark's key (the broadcast's too, on a context with
 * too little memory to keep it), and a cipher list naming a class that does not exist fails the
 * job (Commons Crypto does not fall back from an explicit list).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkIoEncryptionTest {
    private static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target"));
    private static final Path LOG = Path.of(System.getProperty("sealpipe.it.log", "target/sealpipe-it.log"));
    private static final String ENGINE_LINE = "sealpipe engine ";
    private static final int IV_LENGTH = 16;
    /** The broadcast test's job reads every 1024th entry of the table. */
    private static final int BROADCAST_STRIDE = 1024;
    /** What {@code LZ4BlockOutputStream} (Spark's default codec) writes first. */
    private static final byte[] LZ4_MAGIC = "LZ4Block".getBytes(StandardCharsets.US_ASCII);

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
            checkEncryptedFiles(sc, dir, result);
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

    /**
     * A broadcast in an encrypted run, on a context whose memory store holds less than one piece.
     * In local mode a broadcast otherwise stays in memory (the value and its pieces in the memory
     * store of the one block manager, which the tasks read the value from) and never passes
     * through IO encryption. Here the value ({@code broadcast_<id>}, MEMORY_AND_DISK) and each piece
     * ({@code broadcast_<id>_pieceN}, MEMORY_AND_DISK_SER) go to disk through Spark's encrypted
     * channel, the job reads the value back from there, and the files decrypt under Spark's key to
     * the compressed, serialized table.
     */
    @Test
    @Order(3)
    void broadcastBlocksOnDiskAreEncrypted() throws Exception {
        Path dir = TARGET.resolve("spark-local/broadcast");
        EncryptionJob.deleteTree(dir);
        int[] table = EncryptionJob.table();
        long expected = 0;
        for (int i = 0; i < table.length; i += BROADCAST_STRIDE) {
            expected += table[i];
        }
        SparkConf conf = EncryptionJob.conf("broadcast", true, EncryptionJob.SEALPIPE_CIPHER, dir)
                // Storage and execution share 0.6 of 16 KiB: neither the value nor any piece fits
                // (the table barely compresses: 768 KiB pieces leave a last one of about 256 KiB).
                .set("spark.testing.memory", Long.toString(16 << 10))
                .set("spark.testing.reservedMemory", "0")
                .set("spark.broadcast.blockSize", "768k");
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            Broadcast<int[]> broadcast = sc.broadcast(table);
            String id = "broadcast_" + broadcast.id();
            List<Path> pieces = EncryptionJob.files(dir, id + "_piece\\d+");
            List<Path> values = EncryptionJob.files(dir, id);
            assertEquals(1, values.size(), id + " on disk under " + dir);
            assertTrue(pieces.size() > 1, id + "'s pieces on disk under " + dir + ": " + pieces);

            List<Integer> starts = new ArrayList<>();
            for (int i = 0; i < table.length; i += BROADCAST_STRIDE) {
                starts.add(i);
            }
            long sum = sc.parallelize(starts, 2).map(i -> (long) broadcast.value()[i]).reduce(Long::sum);
            assertEquals(expected, sum, "the job's sum over the broadcast read back from disk");

            byte[] key = SparkEnv.get().securityManager().getIOEncryptionKey().get();
            CompressionCodec codec = CompressionCodec.createCodec(sc.getConf());
            // The pieces are one compressed stream cut into blockSize chunks, each encrypted alone.
            pieces = new ArrayList<>(pieces);
            pieces.sort(Comparator.comparingInt(p -> Integer.parseInt(
                    p.getFileName().toString().substring((id + "_piece").length()))));
            BlockManager blocks = SparkEnv.get().blockManager();
            BlockStatus valueStatus = blocks.getStatus(new BroadcastBlockId(broadcast.id(), "")).get();
            assertTrue(valueStatus.memSize() == 0 && valueStatus.diskSize() > 0, id + ": " + valueStatus);
            assertTrue(blocks.getStatus(new BroadcastBlockId(broadcast.id(), "piece" + pieces.size())).isEmpty(),
                    "every piece on disk: " + pieces);
            ByteArrayOutputStream stream = new ByteArrayOutputStream();
            for (int n = 0; n < pieces.size(); n++) {
                assertEquals(id + "_piece" + n, pieces.get(n).getFileName().toString(), "pieces 0.." + n);
                BlockStatus status = blocks.getStatus(new BroadcastBlockId(broadcast.id(), "piece" + n)).get();
                assertTrue(status.memSize() == 0 && status.diskSize() > 0, id + "_piece" + n + ": " + status);
                byte[] bytes = Files.readAllBytes(pieces.get(n));
                byte[] plain = decrypt(key, bytes).readAllBytes();
                if (n == 0) {
                    assertThrows(IOException.class, () -> readTable(codec, new ByteArrayInputStream(bytes)),
                            "a ciphertext piece decompressed");
                    assertArrayEquals(LZ4_MAGIC, Arrays.copyOf(plain, LZ4_MAGIC.length), "LZ4's magic in piece 0");
                }
                stream.write(plain);
            }
            assertArrayEquals(table, readTable(codec, new ByteArrayInputStream(stream.toByteArray())),
                    "the decrypted pieces, decompressed and deserialized");
            byte[] value = Files.readAllBytes(values.get(0));
            assertThrows(IOException.class, () -> readTable(codec, new ByteArrayInputStream(value)),
                    "a ciphertext value decompressed");
            assertArrayEquals(table, readTable(codec, decrypt(key, value)), id + " decrypted");
            System.out.printf("sealpipe: %s (%d bytes) and %d pieces (%d bytes) decrypted with SunJCE%n", id,
                    value.length, pieces.size(), stream.size());
        }
    }

    private static int[] readTable(CompressionCodec codec, InputStream in) throws IOException {
        try (InputStream plain = codec.compressedInputStream(in)) {
            return (int[]) SparkEnv.get().serializer().newInstance().deserializeStream(plain).asIterator().next();
        } catch (RuntimeException e) {
            throw new IOException("cannot read the table", e);
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
     * under Spark's key, which SunJCE's AES/CTR decrypts (LZ4's checksums and Java
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
        System.out.printf("sealpipe: %d shuffle segments decrypted with SunJCE (%d bytes uncompressed)%n",
                segments.size(), plaintext);
        assertThrows(IOException.class, () -> diskBlockRecords(dir, null), "a ciphertext disk block deserialized");
        assertEquals(result.count(), diskBlockRecords(dir, key));
    }

    /**
     * Spark's IV (the first 16 bytes) and AES-CTR after it, decrypted by the JDK's SunJCE: an
     * implementation independent of sealpipe's (whose jce engine may run on SunJCE too, but through
     * its own counter and stream code).
     */
    private static InputStream decrypt(byte[] key, byte[] ivAndCiphertext) throws IOException {
        try {
            Cipher cipher = Cipher.getInstance("AES/CTR/NoPadding", "SunJCE");
            cipher.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "AES"),
                    new IvParameterSpec(ivAndCiphertext, 0, IV_LENGTH));
            return new ByteArrayInputStream(
                    cipher.doFinal(ivAndCiphertext, IV_LENGTH, ivAndCiphertext.length - IV_LENGTH));
        } catch (GeneralSecurityException e) {
            throw new IOException("SunJCE's AES/CTR/NoPadding", e);
        }
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
