package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.io.CompressionCodec;
import org.apache.spark.security.CryptoStreamUtils;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockStatus;
import org.apache.spark.storage.BroadcastBlockId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Spark's IO encryption on sealpipe's cipher in executors that are JVMs of their own
 * ({@code local-cluster}), each job compared with the same job without encryption: the shuffle
 * job of {@link EncryptionJob} (forced spills, a {@code DISK_ONLY} copy read back) and a broadcast
 * that the executors keep on disk. A probe in each executor shows that it loaded sealpipe from the
 * jar the build just made (its {@code spark.executor.extraClassPath}, the only copy on its class
 * path), that it is another process than this one and the other executor, and that sealpipe's
 * engine was chosen there by the encrypted job (its log line written before the probe asked) and
 * not in the plain one.
 */
@Tag("cluster")
class SparkClusterIoEncryptionTest {
    private static final String NAME = "io-encryption";
    private static final int BROADCAST_STRIDE = 1024;

    private final List<JavaSparkContext> contexts = new ArrayList<>();
    private final List<Path> dirs = new ArrayList<>();

    @AfterEach
    void stop() throws IOException {
        for (JavaSparkContext sc : contexts) {
            sc.stop();
        }
        for (Path dir : dirs) {
            Cluster.keepLogs(dir, NAME + "/" + dir.getFileName());
        }
    }

    @Test
    void shuffleSpillAndDiskOnlyBlocksInExecutorsGiveThePlainResult() throws Exception {
        int[] table = EncryptionJob.table();
        long[] expected = EncryptionJob.expected(table);
        Run plain = run("plain", EncryptionJob.Encryption.OFF, table);
        Run sealed = run("sealpipe", EncryptionJob.Encryption.SEALPIPE, table);

        checkProbe(plain.reports, false);
        checkProbe(sealed.reports, true);
        for (Run r : List.of(plain, sealed)) {
            assertEquals(expected[1], r.result.count(), r.name + ": distinct keys");
            assertEquals(expected[0], r.result.total(), r.name + ": sum of the values");
            assertTrue(r.result.diskSize() > 0 && r.result.memSize() == 0, r.name + ": DISK_ONLY blocks "
                    + r.result.diskSize() + " on disk, " + r.result.memSize() + " in memory");
            assertTrue(r.diskBytesSpilled > 0, r.name + ": spilled " + r.diskBytesSpilled + " bytes to disk");
            assertTrue(r.result.summaries().stream().noneMatch(s -> s.executor().equals("driver")),
                    r.name + ": the sorted partitions were read in executors: " + r.result.summaries());
        }
        assertEquals(plain.result.summaries().stream().map(ClusterSummary::summary).toList(),
                sealed.result.summaries().stream().map(ClusterSummary::summary).toList(), "per-partition summaries");
    }

    /**
     * A broadcast of 4 MiB read in both executors, whose memory store holds less than one piece:
     * each executor keeps the value on disk, through IO encryption, and reads it back from there.
     * In the encrypted run the block file does not deserialize as it is, and decrypts with Spark's
     * key to the table; in the plain run it deserializes as it is.
     */
    @Test
    void broadcastKeptOnDiskInExecutorsGivesThePlainResult() throws Exception {
        int[] table = EncryptionJob.table();
        long expected = 0;
        for (int i = 0; i < table.length; i += BROADCAST_STRIDE) {
            expected += table[i];
        }
        for (EncryptionJob.Encryption encryption : List.of(EncryptionJob.Encryption.OFF,
                EncryptionJob.Encryption.SEALPIPE)) {
            String name = "broadcast-" + encryption.name().toLowerCase();
            Path dir = Cluster.home(NAME).resolve(name);
            EncryptionJob.deleteTree(dir);
            SparkConf conf = Cluster.conf(name, dir)
                    .set("spark.io.encryption.enabled", Boolean.toString(encryption.enabled))
                    // Storage and execution share 0.6 of 16 KiB in each executor (as in
                    // SparkIoEncryptionTest): the value and its pieces go to disk.
                    .set("spark.testing.memory", Long.toString(16 << 10))
                    .set("spark.testing.reservedMemory", "0")
                    .set("spark.broadcast.blockSize", "768k");
            if (encryption.cipherClasses != null) {
                conf.set("spark.io.encryption.commons.config.cipher.classes", encryption.cipherClasses);
            }
            dirs.add(dir);
            JavaSparkContext sc = Cluster.start(conf, dir);
            contexts.add(sc);
            Broadcast<int[]> broadcast = sc.broadcast(table);
            String meet = dir.resolve("meet").toString();
            Files.createDirectories(Path.of(meet));
            List<Integer> tasks = List.of(0, 1);
            List<BroadcastOnDisk> seen = sc.parallelize(tasks, 2)
                    .mapPartitions(it -> readBroadcast(it, broadcast, meet, table.length), false).collect();
            assertEquals(2, seen.stream().map(BroadcastOnDisk::pid).distinct().count(), name + ": " + seen);
            long sum = seen.stream().mapToLong(BroadcastOnDisk::sum).sum();
            assertEquals(expected, sum, name + ": the sum over the broadcast read in the executors");
            for (BroadcastOnDisk b : seen) {
                assertNotEquals(ProcessHandle.current().pid(), b.pid(), name + ": an executor process");
                assertTrue(b.memSize() == 0 && b.diskSize() > 0 && b.fileLength() > 0, name + ": on disk: " + b);
                assertEquals(!encryption.enabled, b.readsAsItIs(), name + ": the block file deserializes as it is: " + b);
                assertTrue(b.decryptsToTable(), name + ": the block file reads back to the table: " + b);
            }
            System.out.printf("%s: %s%n", name, seen);
            sc.stop();
        }
    }

    record BroadcastOnDisk(String executorId, long pid, long sum, long memSize, long diskSize, long fileLength,
            boolean readsAsItIs, boolean decryptsToTable) implements Serializable {}

    /**
     * In an executor: the sum over every {@code BROADCAST_STRIDE}th entry of this task's half of the
     * table, the block manager's status of the value, and whether its file reads as it is and
     * through Spark's decryption (by the executor's cipher, sealpipe's in the encrypted run).
     */
    private static Iterator<BroadcastOnDisk> readBroadcast(Iterator<Integer> task, Broadcast<int[]> broadcast,
            String meet, int length) throws Exception {
        Cluster.meet(Path.of(meet));
        int half = task.next();
        int[] values = broadcast.value();
        long sum = 0;
        for (int i = half * length / 2; i < (half + 1) * length / 2; i += BROADCAST_STRIDE) {
            sum += values[i];
        }
        SparkEnv env = SparkEnv.get();
        BlockId id = new BroadcastBlockId(broadcast.id(), "");
        BlockStatus status = env.blockManager().getStatus(id).get();
        Path file = env.blockManager().diskBlockManager().getFile(id).toPath();
        byte[] bytes = Files.readAllBytes(file);
        CompressionCodec codec = CompressionCodec.createCodec(env.conf());
        boolean asItIs = readsTable(codec, new ByteArrayInputStream(bytes), values);
        boolean decrypted = asItIs;
        if (env.securityManager().getIOEncryptionKey().isDefined()) {
            InputStream in = CryptoStreamUtils.createCryptoInputStream(new ByteArrayInputStream(bytes), env.conf(),
                    env.securityManager().getIOEncryptionKey().get());
            decrypted = readsTable(codec, in, values);
        }
        return List.of(new BroadcastOnDisk(env.executorId(), ProcessHandle.current().pid(), sum, status.memSize(),
                status.diskSize(), bytes.length, asItIs, decrypted)).iterator();
    }

    /** The value block is the table, compressed (not serialized as a block of pieces). */
    private static boolean readsTable(CompressionCodec codec, InputStream in, int[] table) {
        try (InputStream plain = codec.compressedInputStream(in)) {
            Object read = SparkEnv.get().serializer().newInstance().deserializeStream(plain).asIterator().next();
            return read instanceof int[] t && java.util.Arrays.equals(t, table);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private record Run(String name, ClusterResult result, List<Cluster.Report> reports, long diskBytesSpilled) {}

    record ClusterSummary(String executor, EncryptionJob.Summary summary) implements Serializable {}

    record ClusterResult(long count, long total, long diskSize, long memSize, List<ClusterSummary> summaries) {}

    private Run run(String name, EncryptionJob.Encryption encryption, int[] table) throws Exception {
        Path dir = Cluster.home(NAME).resolve(name);
        EncryptionJob.deleteTree(dir);
        SparkConf conf = Cluster.conf(name, dir)
                .set("spark.shuffle.spill.numElementsForceSpillThreshold", Integer.toString(EncryptionJob.SPILL_THRESHOLD))
                .set("spark.io.encryption.enabled", Boolean.toString(encryption.enabled));
        if (encryption.cipherClasses != null) {
            conf.set("spark.io.encryption.commons.config.cipher.classes", encryption.cipherClasses);
        }
        dirs.add(dir);
        JavaSparkContext sc = Cluster.start(conf, dir);
        contexts.add(sc);
        EncryptionJob.SpillListener spills = new EncryptionJob.SpillListener();
        sc.sc().addSparkListener(spills);
        long start = System.nanoTime();
        EncryptionJob.Result result = EncryptionJob.run(sc, table);
        List<ClusterSummary> summaries = result.rdd()
                .mapPartitionsWithIndex((p, it) -> {
                    String executor = SparkEnv.get().executorId();
                    long records = 0;
                    long hash = 17;
                    int first = -1;
                    int last = -1;
                    boolean sorted = true;
                    while (it.hasNext()) {
                        var kv = it.next();
                        if (records == 0) {
                            first = kv._1();
                        } else if (kv._1() <= last) {
                            sorted = false;
                        }
                        last = kv._1();
                        hash = hash * 1_000_003L + kv._1() * 0x9e37_79b9_7f4a_7c15L + kv._2();
                        records++;
                    }
                    return List.of(new ClusterSummary(executor,
                            new EncryptionJob.Summary(p, records, first, last, hash, sorted))).iterator();
                }, true).collect();
        System.out.printf("cluster %s: job %d ms%n", name, (System.nanoTime() - start) / 1_000_000);
        List<Cluster.Report> reports = Cluster.probe(sc, dir.resolve("meet"));
        reports.forEach(r -> System.out.printf("cluster %s: executor %s pid %d: %s %s; engine lines %s%n", name,
                r.executorId(), r.pid(), r.codeSource(), r.copies(), r.engineLinesBefore()));
        sc.stop(); // delivers the listener events still queued
        return new Run(name, new ClusterResult(result.count(), result.total(), result.diskSize(), result.memSize(),
                summaries), reports, spills.diskBytesSpilled.get());
    }

    /**
     * Both executors are other processes than this one and than each other, on this JVM's JDK;
     * each loaded sealpipe from the jar just built and sees no other copy; sealpipe's engine line
     * is in an executor's log before the probe ran only if the job encrypted, and names the
     * engine {@code Engines.report()} chose there.
     */
    private static void checkProbe(List<Cluster.Report> reports, boolean encrypted) throws IOException {
        assertEquals(Cluster.EXECUTORS, reports.size(), "reports: " + reports);
        Set<Long> pids = reports.stream().map(Cluster.Report::pid).collect(Collectors.toSet());
        assertEquals(Cluster.EXECUTORS, pids.size(), "executor pids differ: " + reports);
        assertFalse(pids.contains(ProcessHandle.current().pid()), "executors are other processes than the test JVM");
        String jar = Cluster.SEALPIPE_JAR.toRealPath().toString();
        for (Cluster.Report r : reports) {
            String who = "executor " + r.executorId() + " (pid " + r.pid() + "): ";
            assertNotEquals("driver", r.executorId(), who);
            assertEquals(System.getProperty("java.home"), r.javaHome(), who + "the test JVM's JDK");
            assertEquals(jar, r.codeSource(), who + "SealpipeCryptoCipher's code source");
            assertEquals(1, r.copies().size(), who + "copies of SealpipeCryptoCipher: " + r.copies());
            assertTrue(r.copies().get(0).contains(jar), who + r.copies());
            if (encrypted) {
                assertEquals(1, r.engineLinesBefore().size(), who + "the engine line, logged by the encrypted job: "
                        + r.engineLinesBefore());
                assertTrue(r.engineLinesBefore().get(0).startsWith(Cluster.ENGINE_LINE + r.engine() + ":"),
                        who + "the engine line names the engine auto chose (" + r.engine() + "): "
                                + r.engineLinesBefore());
                assertNotEquals("none", r.engine(), who + r.engineReport());
            } else {
                assertEquals(List.of(), r.engineLinesBefore(), who + "sealpipe logged in a job without encryption");
            }
        }
    }
}
