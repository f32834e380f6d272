package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Meter;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.commons.SealpipeChunkedGcmCipher;
import io.sealpipe.commons.SealpipeCryptoCipher;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.commons.crypto.stream.CryptoInputStream;
import org.apache.commons.crypto.stream.CryptoOutputStream;
import org.apache.spark.FetchFailed;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.network.TransportContext;
import org.apache.spark.network.server.TransportServer;
import org.apache.spark.network.shuffle.ExternalBlockHandler;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockStatus;
import org.apache.spark.storage.BroadcastBlockId;
import org.apache.spark.storage.RDDInfo;
import org.apache.spark.storage.StorageLevel;
import org.apache.spark.unsafe.hash.Murmur3_x86_32;
import org.apache.spark.util.collection.ExternalSorter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.TestMethodOrder;
import scala.Option;
import scala.Product2;
import scala.Tuple2;

/**
 * Spark's IO encryption on sealpipe's chunked AES-GCM cipher (issue 47) in executors that are JVMs
 * of their own ({@code local-cluster}), with Spark's external shuffle service serving the shuffle
 * files (an {@link ExternalBlockHandler} server in this JVM, as Spark's own
 * {@code ExternalShuffleServiceSuite} runs it):
 *
 * <ol>
 *   <li>the jobs give the plain results, computed in this JVM without Spark (a context of its own
 *       would cost CI 20 s): a shuffle whose map and reduce sides spill, Spark SQL's sort-merge
 *       join and aggregation (its {@code UnsafeRow} shuffles, sorts and join buffer spilling), a
 *       {@code DISK_ONLY} cache read back and a broadcast the executors keep on disk; the shuffle
 *       service served blocks;</li>
 *   <li>a shuffle file, a spill file and a {@code DISK_ONLY} block file changed between their
 *       write and their read (a byte flipped, a stream cut at a chunk boundary, two chunks swapped)
 *       fail that read with sealpipe's {@code StreamAuthenticationException}. A shuffle read that
 *       fails is a fetch failure: Spark runs the map stage again and the job gives the untampered
 *       result, which the test asserts with the fetch failure's text; a cache or spill read fails
 *       its task and ({@code spark.task.maxFailures} 1) the job;</li>
 *   <li>the control: the same changes under sealpipe's CTR cipher (no integrity) are not reported as
 *       an authentication failure: the job gives another result, or fails in decompression (LZ4's
 *       checksum, on shuffle and spill files) or deserialization.</li>
 * </ol>
 *
 * <p>Spill files exist only while the task that wrote them runs (they are merged and deleted before
 * it ends), so a task of the test's spills records through Spark's own {@code ExternalSorter},
 * changes its spill file, and then lets the sorter merge it (Spark's {@code SpillReader}).
 *
 * <p>Each stored stream is Spark's 16-byte IV, then (GCM) a 24-byte salt, a 32-byte key commitment
 * and chunks of 16,400 bytes, the last one shorter: the changes are placed by that layout. A shuffle
 * data file holds one stream per reduce partition (its {@code .index} gives the segments); a spill
 * file one stream per batch of {@code spark.shuffle.spill.batchSize} records; a block file one.
 * Each case prints a line {@code tamper: <cipher> <target> <kind>: <what Spark did>}.
 *
 * <p><b>Not in CI yet</b>: the three Spark cases take about 80 s per Spark line run alone (142 s
 * beside another build), more than CI's
 * time budget has left; they run with {@code -Dsealpipe.it.spark.gcm-cipher=true}, e.g. {@code cd
 * target/it/spark-3.5 && mvn -o test-compile surefire:test@default-test -Pcluster
 * -Dtest=SparkClusterGcmCipherTest -Dsealpipe.it.spark.gcm-cipher=true}. What CI runs here is the
 * layout check, which needs no Spark.
 */
@Tag("cluster")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkClusterGcmCipherTest {
    private static final String NAME = "gcm-cipher";
    static final String GCM_CIPHER = SealpipeChunkedGcmCipher.class.getName();
    static final String CTR_CIPHER = SealpipeCryptoCipher.class.getName();
    /** The system property that runs the Spark cases (see the class comment). */
    static final String SPARK_CASES = "sealpipe.it.spark.gcm-cipher";
    /** The exception sealpipe's GCM streams throw on a failed authentication. */
    static final String AUTHENTICATION_FAILURE = StreamAuthenticationException.class.getName();

    /** Spark's IV, then the GCM stream's salt and key commitment. */
    static final int HEADER = 16 + 24 + 32;
    /** A full chunk: 16 KiB of plaintext and its tag. */
    static final int CHUNK = 16_384 + 16;

    /** Elements after which Spark's sorters and maps spill (each spill file then holds several batches). */
    static final int SPILL_THRESHOLD = 20_000;
    static final int SPILL_BATCH = 5_000;
    static final long SEED = 0x47_5ea1_91beL;

    private static JavaSparkContext context;
    private static Cipher contextCipher;
    private static ShuffleService shuffleService;
    private static final List<Path> dirs = new ArrayList<>();
    /** The executors' local dirs (their block managers' folders) in the running context. */
    private static List<Path> executorDirs;

    /** The cipher of Spark's IO encryption in a context. */
    enum Cipher {
        CTR(CTR_CIPHER), GCM(GCM_CIPHER);

        final String cipherClasses;

        Cipher(String cipherClasses) {
            this.cipherClasses = cipherClasses;
        }
    }

    /** What a tampering case does to one stored stream. */
    enum Kind {
        /** One byte in the middle of the first chunk, flipped. */
        FLIP,
        /** The stream cut after its first chunk (at a chunk boundary: the rest of its chunks gone). */
        TRUNCATE,
        /** The first two chunks swapped. */
        SWAP
    }

    @AfterAll
    static void stopAll() throws IOException {
        stopContext();
        for (Path dir : dirs) {
            Cluster.keepLogs(dir, NAME + "/" + dir.getFileName());
        }
    }

    /**
     * The layout the cases rely on, without Spark: a stream written as Spark writes it (its IV,
     * then Commons Crypto's stream on the GCM cipher) is as long as {@link #HEADER} and {@link
     * #CHUNK} say, and {@link #tamperStream} hits it where it means to: a flip or a swap fails
     * chunk 0 (a wrong header length would fail the commitment instead), a cut leaves exactly
     * chunk 0 (another chunk size would be reported otherwise); untouched, it reads back.
     */
    @Test
    @Order(0)
    void theTamperingHitsTheStreamWhereTheLayoutSays(@TempDir Path dir) throws Exception {
        byte[] plain = new byte[3 * 16_384 + 100];
        new SplittableRandom(SEED).nextBytes(plain);
        SecretKeySpec key = new SecretKeySpec(new byte[16], "AES");
        byte[] iv = new byte[16];
        iv[0] = 47;
        Properties props = new Properties();
        props.setProperty("commons.crypto.cipher.classes", GCM_CIPHER);
        ByteArrayOutputStream stored = new ByteArrayOutputStream();
        stored.write(iv);
        try (var out = new CryptoOutputStream("AES/CTR/NoPadding", props, stored, key,
                new IvParameterSpec(iv))) {
            out.write(plain);
        }
        int n = plain.length;
        assertEquals(HEADER + n + 16L * (n / 16_384 + 1), stored.size(), "Spark's IV, the header, chunks of " + CHUNK);
        for (Kind kind : Kind.values()) {
            Path file = dir.resolve(kind.name());
            Files.write(file, stored.toByteArray());
            long cut = tamperStream(file, 0, Files.size(file), kind);
            byte[] tampered = Files.readAllBytes(file);
            tampered = Arrays.copyOf(tampered, (int) (tampered.length - cut));
            byte[] read = tampered;
            IOException e = assertThrows(IOException.class, () -> readStored(read, key, props), kind.name());
            assertEquals(AUTHENTICATION_FAILURE, e.getClass().getName(), kind + ": " + e);
            String expected = kind == Kind.TRUNCATE ? "it ends with a full chunk (chunk 0)"
                    : "chunk 0 (plaintext bytes from 0) failed authentication";
            assertTrue(e.getMessage().contains(expected), kind + ": " + e.getMessage());
        }
        assertArrayEquals(plain, readStored(stored.toByteArray(), key, props), "untouched");
    }

    /** Reads a stored stream as Spark does: its IV first, then Commons Crypto's stream. */
    private static byte[] readStored(byte[] stored, SecretKeySpec key, Properties props)
            throws IOException {
        byte[] iv = Arrays.copyOf(stored, 16);
        try (var in = new CryptoInputStream("AES/CTR/NoPadding", props,
                new ByteArrayInputStream(stored, 16, stored.length - 16), key, new IvParameterSpec(iv))) {
            return in.readAllBytes();
        }
    }

    @Test
    @Order(1)
    @EnabledIfSystemProperty(named = SPARK_CASES, matches = "true")
    void jobsOnTheGcmCipherGiveThePlainResults() throws Exception {
        long start = System.nanoTime();
        Jobs gcm = jobs(Cipher.GCM);
        assertTrue(gcm.shuffleSpilled > 0, "the shuffle spilled " + gcm.shuffleSpilled + " bytes to disk");
        assertTrue(gcm.sqlSpilled > 0, "Spark SQL spilled " + gcm.sqlSpilled + " bytes to disk");
        assertTrue(gcm.cacheOnDisk, "the cache is on disk only");
        assertTrue(gcm.broadcastOnDisk, "the broadcast is on disk in both executors: " + gcm.broadcast);
        assertTrue(gcm.blocksFromShuffleService > 0, "blocks the shuffle service served: " + gcm.blocksFromShuffleService);
        Jobs plain = Jobs.plain();
        assertEquals(plain.shuffle, gcm.shuffle, "the spilling shuffle's result");
        assertEquals(plain.join, gcm.join, "Spark SQL's join and aggregation");
        assertEquals(plain.cache, gcm.cache, "the DISK_ONLY cache read back");
        assertEquals(plain.broadcastSum, gcm.broadcastSum, "the broadcast read in the executors");
        System.out.printf("gcm-cipher: GCM jobs in %d ms (with the context's start)%n", (System.nanoTime() - start) / 1_000_000);
    }

    @Test
    @Order(2)
    @EnabledIfSystemProperty(named = SPARK_CASES, matches = "true")
    void tamperedStreamsFailToAuthenticateUnderTheGcmCipher() throws Exception {
        JavaSparkContext sc = context(Cipher.GCM);
        for (Target target : Target.values()) {
            for (Kind kind : Kind.values()) {
                Outcome o = tamper(sc, Cipher.GCM, target, kind);
                assertTrue(o.authenticationFailure(), () -> "GCM " + target + " " + kind
                        + ": the read fails on sealpipe's authentication: " + o);
                // A shuffle read failure is a fetch failure: Spark runs the map stage again and the
                // job gives the untampered result; any other read failure fails the job.
                if (target == Target.SHUFFLE) {
                    assertTrue(o.fetchFailures() > 0 && o.resubmittedStages() > 0, () -> "fetch failed, map stage again: " + o);
                    assertTrue(o.failures().stream().allMatch(f -> f.startsWith("FetchFailed(") && f.contains(AUTHENTICATION_FAILURE)),
                            () -> "each failure a fetch failure caused by sealpipe's authentication: " + o);
                    assertEquals(o.expected(), o.result(), () -> "the result after the map stage ran again: " + o);
                } else {
                    assertNotNull(o.jobFailure(), () -> "the job failed: " + o);
                }
            }
        }
    }

    @Test
    @Order(3)
    @EnabledIfSystemProperty(named = SPARK_CASES, matches = "true")
    void tamperedStreamsAreNotAuthenticatedUnderTheCtrCipher() throws Exception {
        JavaSparkContext sc = context(Cipher.CTR);
        for (Target target : Target.values()) {
            for (Kind kind : Kind.values()) {
                Outcome o = tamper(sc, Cipher.CTR, target, kind);
                assertFalse(o.authenticationFailure(), () -> "CTR " + target + " " + kind + ": " + o);
                assertTrue(!o.expected().equals(o.result()) || !o.failures().isEmpty() || o.jobFailure() != null,
                        () -> "CTR " + target + " " + kind + ": the change shows as another result or an error: " + o);
            }
        }
        stopContext();
    }

    // ---------------------------------------------------------------------------------------------
    // Contexts

    private static JavaSparkContext context(Cipher cipher) throws Exception {
        if (context != null && contextCipher == cipher) {
            return context;
        }
        stopContext();
        Path dir = Cluster.home(NAME).resolve(cipher.name().toLowerCase());
        EncryptionJob.deleteTree(dir);
        dirs.add(dir);
        shuffleService = ShuffleService.start();
        SparkConf conf = Cluster.conf(NAME + "-" + cipher.name().toLowerCase(), dir)
                .set("spark.io.encryption.enabled", "true")
                .set("spark.io.encryption.commons.config.cipher.classes", cipher.cipherClasses)
                // Spill early (map side, reduce side, SQL's sorters) in batches: spill files of
                // several streams each.
                .set("spark.shuffle.spill.numElementsForceSpillThreshold", Integer.toString(SPILL_THRESHOLD))
                .set("spark.shuffle.spill.batchSize", Integer.toString(SPILL_BATCH))
                // No bypass writer: RDD shuffles go through ExternalSorter, SQL's through
                // UnsafeShuffleWriter, which merges its spills by decrypting and encrypting again.
                .set("spark.shuffle.sort.bypassMergeThreshold", "0")
                // Storage and execution share 0.6 of 6 MiB in each executor: a 4 MiB broadcast
                // stays on disk; Spark SQL's sorters spill.
                .set("spark.testing.memory", Long.toString(6L << 20))
                .set("spark.testing.reservedMemory", "0")
                .set("spark.buffer.pageSize", "256k")
                .set("spark.broadcast.blockSize", "768k")
                // Shuffle blocks of the other executor come from the shuffle service, not from its
                // files directly (same host).
                .set("spark.shuffle.service.enabled", "true")
                .set("spark.shuffle.service.port", Integer.toString(shuffleService.server.getPort()))
                .set("spark.shuffle.readHostLocalDisk", "false")
                // A task that fails its read fails the job at once (fetch failures are not task
                // failures: a shuffle read failure still runs the map stage again).
                .set("spark.task.maxFailures", "1");
        System.out.printf("gcm-cipher %s: shuffle service on 127.0.0.1:%d%n", cipher, shuffleService.server.getPort());
        try {
            context = Cluster.start(conf, dir);
        } catch (Throwable e) {
            shuffleService.close();
            shuffleService = null;
            throw e;
        }
        contextCipher = cipher;
        // Spark keeps the first context's spark.local.dir for the JVM (Utils.localRootDirs), and
        // the Workers run in this JVM: ask the executors where their block managers keep files.
        Path meet = dir.resolve("meet-dirs");
        Files.createDirectories(meet);
        String meetDir = meet.toString();
        executorDirs = context.parallelize(List.of(0, 1), 2).mapPartitions(it -> {
            Cluster.meet(Path.of(meetDir));
            List<String> out = new ArrayList<>();
            for (File f : SparkEnv.get().blockManager().diskBlockManager().localDirs()) {
                out.add(f.getAbsolutePath());
            }
            return out.iterator();
        }, false).collect().stream().map(Path::of).toList();
        return context;
    }

    private static void stopContext() {
        try {
            if (context != null) {
                context.stop();
            }
        } finally {
            context = null;
            contextCipher = null;
            if (shuffleService != null) {
                shuffleService.close();
                shuffleService = null;
            }
        }
    }

    /** Spark's external shuffle service in this JVM, on 127.0.0.1, without its index cache. */
    record ShuffleService(TransportContext transport, ExternalBlockHandler handler, TransportServer server)
            implements AutoCloseable {
        static ShuffleService start() throws IOException {
            // No cached index: the tampering cases rewrite .index files the service has read.
            TransportConf conf = new TransportConf("shuffle", new MapConfigProvider(Map.of(
                    "spark.shuffle.service.index.cache.size", "0")));
            ExternalBlockHandler handler = new ExternalBlockHandler(conf, null);
            TransportContext transport = new TransportContext(conf, handler);
            try {
                return new ShuffleService(transport, handler, transport.createServer("127.0.0.1", 0, List.of()));
            } catch (RuntimeException e) {
                try {
                    handler.close();
                } finally {
                    transport.close();
                }
                throw e;
            }
        }

        long blocksServed() {
            return ((Meter) handler.getAllMetrics().getMetrics().get("blockTransferMessageRate")).getCount();
        }

        @Override
        public void close() {
            try {
                server.close();
            } finally {
                try {
                    handler.close();
                } finally {
                    transport.close();
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Point 1: the jobs against the plain run

    static final int SHUFFLE_RECORDS = 25_000;
    static final int SHUFFLE_KEYS = 30_000;
    static final int SQL_ROWS = 40_000;
    static final int SQL_KEYS = 499;
    static final int CACHE_RECORDS = 3_000;

    /**
     * What the jobs of point 1 gave. The plain results ({@link #plain}) are computed here without
     * Spark (in the way {@link EncryptionJob#expected} is), which saves a context of its own.
     */
    record Jobs(List<String> shuffle, long shuffleSpilled, List<String> join,
            long sqlSpilled, List<String> cache, boolean cacheOnDisk, long broadcastSum,
            List<BroadcastOnDisk> broadcast, boolean broadcastOnDisk, long blocksFromShuffleService) {
        /** The results of the same jobs, computed in this JVM. */
        static Jobs plain() throws Exception {
            TreeMap<Integer, Long> sums = new TreeMap<>();
            for (int p = 0; p < 4; p++) {
                for (Iterator<Tuple2<Integer, Long>> it = pairs(p, SHUFFLE_RECORDS, SHUFFLE_KEYS); it.hasNext();) {
                    Tuple2<Integer, Long> kv = it.next();
                    sums.merge(kv._1(), kv._2(), Long::sum);
                }
            }
            List<String> shuffle = new ArrayList<>();
            sums.forEach((k, v) -> shuffle.add(k + "=" + v));

            // Per key of the facts: count, sum of hash(id), least sha2(id).
            long[] count = new long[SQL_KEYS];
            long[] sum = new long[SQL_KEYS];
            String[] min = new String[SQL_KEYS];
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            for (long id = 0; id < SQL_ROWS; id++) {
                int k = (int) (id % SQL_KEYS);
                String hex = HexFormat.of().formatHex(sha256.digest(Long.toString(id).getBytes(StandardCharsets.UTF_8)));
                count[k]++;
                sum[k] += Murmur3_x86_32.hashLong(id, 42); // Spark SQL's hash(), seed 42
                min[k] = min[k] == null || hex.compareTo(min[k]) < 0 ? hex : min[k];
            }
            List<String> join = new ArrayList<>();
            for (int d = 0; d < 2 * SQL_KEYS; d++) {
                int k = d % SQL_KEYS;
                join.add("[" + d + "," + count[k] + "," + sum[k] + "," + min[k] + "]");
            }
            List<String> cache = new ArrayList<>();
            for (int p = 0; p < 4; p++) {
                cache.add(digest(p, bytePairs(p, CACHE_RECORDS)).next());
            }
            int[] table = EncryptionJob.table();
            long broadcastSum = 0;
            for (int i = 0; i < table.length; i += BROADCAST_STRIDE) {
                broadcastSum += table[i];
            }
            return new Jobs(sorted(shuffle), 0, sorted(join), 0, sorted(cache), true,
                    broadcastSum, List.of(), true, 0);
        }
    }

    static final int BROADCAST_STRIDE = 1024;

    record BroadcastOnDisk(String executorId, long pid, long sum, long memSize, long diskSize) implements Serializable {}

    private static Jobs jobs(Cipher cipher) throws Exception {
        JavaSparkContext sc = context(cipher);
        Spills spills = new Spills();
        sc.sc().addSparkListener(spills);
        long t0 = System.nanoTime();

        // A shuffle with map-side combine that spills on both sides (ExternalSorter, then
        // ExternalAppendOnlyMap in the reduce tasks).
        List<String> shuffle = sorted(sc.parallelize(List.of(0, 1, 2, 3), 4)
                .flatMapToPair(p -> pairs(p, SHUFFLE_RECORDS, SHUFFLE_KEYS))
                .reduceByKey(Long::sum, 2)
                .map(kv -> kv._1() + "=" + kv._2())
                .collect());
        long shuffleSpilled = spills.take(sc);
        long t1 = System.nanoTime();

        // Spark SQL (its UnsafeRow shuffles and sorts), one query for the time it takes: a sort-merge
        // join whose buffered side (the facts, 80 rows a key) spills past 64 rows, aggregated
        // (partial aggregation, a shuffle, the final one).
        SparkSession spark = SparkSession.builder().getOrCreate();
        spark.conf().set("spark.sql.shuffle.partitions", "4");
        spark.conf().set("spark.sql.adaptive.enabled", "false");
        spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
        spark.conf().set("spark.sql.sortMergeJoinExec.buffer.spill.threshold", "64");
        var facts = spark.range(0, SQL_ROWS, 1, 4).selectExpr("id % " + SQL_KEYS + " AS k", "hash(id) AS v",
                "sha2(CAST(id AS STRING), 256) AS s");
        var dims = spark.range(0, 2 * SQL_KEYS, 1, 2).selectExpr("id % " + SQL_KEYS + " AS k", "id AS d");
        List<String> join = rows(dims.join(facts, "k").groupBy("d")
                .agg(functions.count("*"), functions.sum("v"), functions.min("s")).collectAsList());
        long sqlSpilled = spills.take(sc);
        long t2 = System.nanoTime();

        // A DISK_ONLY cache, read back.
        JavaPairRDD<Integer, byte[]> cached = sc.parallelize(List.of(0, 1, 2, 3), 4)
                .flatMapToPair(p -> bytePairs(p, CACHE_RECORDS))
                .persist(StorageLevel.DISK_ONLY());
        cached.count();
        List<String> cache = sorted(cached.mapPartitionsWithIndex(SparkClusterGcmCipherTest::digest, true).collect());
        boolean cacheOnDisk = false;
        for (RDDInfo info : sc.sc().getRDDStorageInfo()) {
            if (info.id() == cached.id()) {
                cacheOnDisk = info.diskSize() > 0 && info.memSize() == 0;
            }
        }
        cached.unpersist(true);
        long t3 = System.nanoTime();

        // A broadcast of 4 MiB, more than the executors' memory: each keeps it on disk.
        Broadcast<int[]> broadcast = sc.broadcast(EncryptionJob.table());
        Path meet = Cluster.home(NAME).resolve(cipher.name().toLowerCase()).resolve("meet-broadcast");
        Files.createDirectories(meet);
        String meetDir = meet.toString();
        List<BroadcastOnDisk> seen = sc.parallelize(List.of(0, 1), 2)
                .mapPartitions(it -> readBroadcast(it, broadcast, meetDir), false).collect();
        long broadcastSum = seen.stream().mapToLong(BroadcastOnDisk::sum).sum();
        boolean broadcastOnDisk = seen.size() == 2 && seen.stream().map(BroadcastOnDisk::pid).distinct().count() == 2
                && seen.stream().allMatch(b -> b.memSize() == 0 && b.diskSize() > 0);
        broadcast.destroy();
        long served = shuffleService.blocksServed();
        sc.sc().removeSparkListener(spills);
        System.out.printf("gcm-cipher %s: ms shuffle %d, SQL %d, cache %d, broadcast %d%n", cipher,
                (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, (t3 - t2) / 1_000_000, (System.nanoTime() - t3) / 1_000_000);
        System.out.printf("gcm-cipher %s: shuffle spilled %d bytes, SQL %d; cache on disk %s; broadcast %s; "
                + "shuffle service served %d blocks%n", cipher, shuffleSpilled, sqlSpilled, cacheOnDisk, seen, served);
        return new Jobs(shuffle, shuffleSpilled, join, sqlSpilled, cache, cacheOnDisk, broadcastSum, seen,
                broadcastOnDisk, served);
    }

    /** Sums the spill metrics of the tasks that ended since the last {@link #take}. */
    static final class Spills extends SparkListener {
        private final AtomicLong diskBytesSpilled = new AtomicLong();

        @Override
        public void onTaskEnd(SparkListenerTaskEnd taskEnd) {
            if (taskEnd.taskMetrics() != null) {
                diskBytesSpilled.addAndGet(taskEnd.taskMetrics().diskBytesSpilled());
            }
        }

        long take(JavaSparkContext sc) throws Exception {
            sc.sc().listenerBus().waitUntilEmpty(Cluster.DEADLINE.toMillis());
            return diskBytesSpilled.getAndSet(0);
        }
    }

    private static Iterator<BroadcastOnDisk> readBroadcast(Iterator<Integer> task, Broadcast<int[]> broadcast,
            String meet) throws Exception {
        Cluster.meet(Path.of(meet));
        int half = task.next();
        int[] values = broadcast.value();
        long sum = 0;
        for (int i = half * values.length / 2; i < (half + 1) * values.length / 2; i += BROADCAST_STRIDE) {
            sum += values[i];
        }
        SparkEnv env = SparkEnv.get();
        BlockId id = new BroadcastBlockId(broadcast.id(), "");
        BlockStatus status = env.blockManager().getStatus(id).get();
        return List.of(new BroadcastOnDisk(env.executorId(), ProcessHandle.current().pid(), sum, status.memSize(),
                status.diskSize())).iterator();
    }

    private static List<String> rows(List<Row> rows) {
        List<String> out = new ArrayList<>();
        for (Row r : rows) {
            out.add(r.toString());
        }
        return sorted(out);
    }

    private static List<String> sorted(List<String> list) {
        List<String> out = new ArrayList<>(list);
        Collections.sort(out);
        return out;
    }

    /** Seeded pairs of partition {@code p}: keys below {@code keys}, values below 1,000,000. */
    static Iterator<Tuple2<Integer, Long>> pairs(int p, int count, int keys) {
        SplittableRandom random = new SplittableRandom(SEED + p);
        List<Tuple2<Integer, Long>> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(new Tuple2<>(random.nextInt(keys), (long) random.nextInt(1_000_000)));
        }
        return out.iterator();
    }

    /** Seeded pairs of partition {@code p}: distinct keys, 32 random bytes each (which do not compress). */
    static Iterator<Tuple2<Integer, byte[]>> bytePairs(int p, int count) {
        SplittableRandom random = new SplittableRandom(SEED * 31 + p);
        List<Tuple2<Integer, byte[]>> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            byte[] value = new byte[32];
            random.nextBytes(value);
            out.add(new Tuple2<>(p * count + i, value));
        }
        return out.iterator();
    }

    /** A partition's record count and an order-independent hash of its records. */
    static Iterator<String> digest(int partition, Iterator<Tuple2<Integer, byte[]>> records) {
        long count = 0;
        long hash = 0;
        while (records.hasNext()) {
            Tuple2<Integer, byte[]> r = records.next();
            count++;
            hash += (r._1() * 0x9e37_79b9_7f4a_7c15L) ^ Arrays.hashCode(r._2());
        }
        return List.of(partition + ":" + count + ":" + Long.toHexString(hash)).iterator();
    }

    // ---------------------------------------------------------------------------------------------
    // Points 2 and 3: tampering

    /** Where a case changes a stream. */
    enum Target {
        /** A reduce partition's segment of a shuffle data file, between the map stage and a job that reuses it. */
        SHUFFLE,
        /** The first batch of an {@code ExternalSorter}'s spill file, between the spill and the merge that reads it. */
        SPILL,
        /** A {@code DISK_ONLY} block file ({@code rdd_*_*}), between the job that cached it and one that reads it. */
        CACHE
    }

    /**
     * What Spark did with a tampered stream: the job's result (null if it failed) and the
     * untampered one, the failures of tasks (their text), the job's failure, how many fetch
     * failures and stages submitted again.
     */
    record Outcome(String tampered, List<String> expected, List<String> result, List<String> failures,
            String jobFailure, int fetchFailures, int resubmittedStages) {
        boolean authenticationFailure() {
            return failures.stream().anyMatch(f -> f.contains(AUTHENTICATION_FAILURE))
                    || (jobFailure != null && jobFailure.contains(AUTHENTICATION_FAILURE));
        }

        String summary() {
            if (result == null) {
                return "job failed: " + firstLine(jobFailure);
            }
            String what = result.equals(expected) ? "the untampered result"
                    : "ANOTHER result (partition:records:hash " + result + ", untampered " + expected + ")";
            if (fetchFailures > 0) {
                return fetchFailures + " fetch failure(s), " + resubmittedStages + " stage(s) submitted again, then "
                        + what + "; first failure: " + firstLine(failures.get(0));
            }
            return failures.isEmpty() ? "no failure, " + what : failures.size() + " task failure(s), then " + what
                    + "; first: " + firstLine(failures.get(0));
        }
    }

    /**
     * The first line of a failure's text, with the line that names sealpipe's authentication
     * failure or, for a fetch failure, its message (on the line after {@code message=}).
     */
    static String firstLine(String s) {
        if (s == null) {
            return "null";
        }
        String[] lines = s.replace("\r", "").split("\n");
        String first = lines[0].trim();
        for (int i = 1; i < lines.length; i++) {
            if (lines[i].contains(AUTHENTICATION_FAILURE) || lines[i - 1].endsWith("message=")) {
                return first + " / " + lines[i].trim();
            }
        }
        return first;
    }

    /** Records failed tasks and stages submitted again. */
    static final class Failures extends SparkListener {
        final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        final AtomicLong fetchFailures = new AtomicLong();
        final AtomicLong resubmitted = new AtomicLong();

        @Override
        public void onTaskEnd(SparkListenerTaskEnd taskEnd) {
            if (taskEnd.reason() instanceof TaskFailedReason failed) {
                failures.add(failed.toErrorString());
                if (failed instanceof FetchFailed) {
                    fetchFailures.incrementAndGet();
                }
            }
        }

        @Override
        public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
            if (submitted.stageInfo().attemptNumber() > 0) {
                resubmitted.incrementAndGet();
            }
        }
    }

    private static Outcome tamper(JavaSparkContext sc, Cipher cipher, Target target, Kind kind) throws Exception {
        long start = System.nanoTime();
        Failures listener = new Failures();
        List<String> expected;
        String tampered;
        List<String> result = null;
        String jobFailure = null;
        List<Path> local = executorDirs;
        switch (target) {
            case SHUFFLE -> {
                JavaPairRDD<Integer, byte[]> shuffled = sc.parallelize(List.of(0, 1), 2)
                        .flatMapToPair(p -> bytePairs(p, 6_000))
                        .partitionBy(new HashPartitioner(2));
                JavaRDD<String> digests = shuffled.mapPartitionsWithIndex(SparkClusterGcmCipherTest::digest, true);
                expected = digests.collect();
                int shuffleId = ((ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head()).shuffleId();
                tampered = tamperShuffle(local, shuffleId, kind);
                sc.sc().addSparkListener(listener);
                try {
                    result = shuffled.mapPartitionsWithIndex(SparkClusterGcmCipherTest::digest, true).collect();
                } catch (Exception e) {
                    jobFailure = text(e);
                }
            }
            case CACHE -> {
                JavaPairRDD<Integer, byte[]> cached = sc.parallelize(List.of(0, 1), 2)
                        .flatMapToPair(p -> bytePairs(p, 6_000))
                        .persist(StorageLevel.DISK_ONLY());
                JavaRDD<String> digests = cached.mapPartitionsWithIndex(SparkClusterGcmCipherTest::digest, true);
                expected = digests.collect();
                tampered = tamperCache(local, cached.id(), kind);
                sc.sc().addSparkListener(listener);
                try {
                    result = cached.mapPartitionsWithIndex(SparkClusterGcmCipherTest::digest, true).collect();
                } catch (Exception e) {
                    jobFailure = text(e);
                }
                cached.unpersist(true);
            }
            case SPILL -> {
                // Spill files live only within the task that spills: the task spills through
                // Spark's ExternalSorter, changes its spill file, then merges (reads) it.
                expected = sc.parallelize(List.of(0), 1).mapPartitions(it -> spillAndMerge(null), false).collect();
                sc.sc().addSparkListener(listener);
                List<String> out = null;
                try {
                    out = sc.parallelize(List.of(0), 1).mapPartitions(it -> spillAndMerge(kind), false).collect();
                } catch (Exception e) {
                    jobFailure = text(e);
                }
                if (out != null) {
                    tampered = out.get(0);
                    result = out.subList(1, out.size());
                } else {
                    tampered = "the first batch of a spill file as " + expected.get(0);
                }
                expected = expected.subList(1, expected.size());
            }
            default -> throw new AssertionError(target);
        }
        sc.sc().listenerBus().waitUntilEmpty(Cluster.DEADLINE.toMillis());
        sc.sc().removeSparkListener(listener);
        Outcome o = new Outcome(tampered, expected, result, List.copyOf(listener.failures), jobFailure,
                (int) listener.fetchFailures.get(), (int) listener.resubmitted.get());
        System.out.printf("tamper: %s %s %s: %s (%s; %d ms)%n", cipher, target.name().toLowerCase(),
                kind.name().toLowerCase(), o.summary(), tampered, (System.nanoTime() - start) / 1_000_000);
        String first = o.failures().isEmpty() ? o.jobFailure() : o.failures().get(0);
        if (first != null) {
            System.out.println("  " + String.join("\n  ", first.lines().limit(12).toList()));
        }
        return o;
    }

    static String text(Throwable e) {
        StringBuilder out = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            out.append(t).append('\n');
        }
        return out.toString();
    }

    /**
     * Changes the largest reduce segment of the first map output of shuffle {@code shuffleId} under
     * {@code local}; a cut segment is removed from the data file and the index rewritten, so that
     * only the stream is short.
     */
    static String tamperShuffle(List<Path> local, int shuffleId, Kind kind) throws IOException {
        List<Path> data = files(local, "shuffle_" + shuffleId + "_\\d+_0\\.data");
        assertFalse(data.isEmpty(), "no data files of shuffle " + shuffleId + " under " + local);
        Path file = data.get(0);
        // The index is in the subdirectory its own name hashes to.
        String indexName = file.getFileName().toString().replace(".data", ".index");
        List<Path> indexes = files(local, Pattern.quote(indexName));
        assertEquals(1, indexes.size(), () -> indexName + ": " + indexes);
        Path index = indexes.get(0);
        long[] offsets = readIndex(index);
        int partition = 0;
        for (int p = 1; p + 1 < offsets.length; p++) {
            if (offsets[p + 1] - offsets[p] > offsets[partition + 1] - offsets[partition]) {
                partition = p;
            }
        }
        long start = offsets[partition];
        long length = offsets[partition + 1] - start;
        String what = file.getFileName() + " reduce partition " + partition + " (bytes " + start + ".."
                + (start + length) + " of " + Files.size(file) + ")";
        long cut = tamperStream(file, start, length, kind);
        if (cut > 0) {
            byte[] bytes = Files.readAllBytes(file);
            byte[] shorter = new byte[bytes.length - (int) cut];
            long end = start + length - cut;
            System.arraycopy(bytes, 0, shorter, 0, (int) end);
            System.arraycopy(bytes, (int) (start + length), shorter, (int) end, bytes.length - (int) (start + length));
            Files.write(file, shorter);
            for (int p = partition + 1; p < offsets.length; p++) {
                offsets[p] -= cut;
            }
            writeIndex(index, offsets);
        }
        return what;
    }

    /** Changes the block file of partition 0 of the cached RDD {@code rddId} under {@code local}. */
    static String tamperCache(List<Path> local, int rddId, Kind kind) throws IOException {
        List<Path> blocks = files(local, "rdd_" + rddId + "_0");
        assertEquals(1, blocks.size(), "the block file of rdd_" + rddId + "_0 under " + local + ": " + blocks);
        Path file = blocks.get(0);
        long length = Files.size(file);
        long cut = tamperStream(file, 0, length, kind);
        if (cut > 0) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(length - cut);
            }
        }
        return file.getFileName() + " (" + length + " bytes)";
    }

    /**
     * Changes the stream at {@code [start, start + length)} of {@code file} in place; for
     * {@link Kind#TRUNCATE} returns how many bytes at its end the caller removes (its chunks after
     * the first), else 0. The stream must hold two full chunks and its final one.
     */
    static long tamperStream(Path file, long start, long length, Kind kind) throws IOException {
        assertTrue(length > HEADER + 2L * CHUNK, () -> file + ": a stream of " + length + " bytes at " + start
                + ", not two full chunks");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            switch (kind) {
                case FLIP -> {
                    long at = start + HEADER + CHUNK / 2;
                    ByteBuffer b = ByteBuffer.allocate(1);
                    ch.read(b, at);
                    b.put(0, (byte) (b.get(0) ^ 0x20)).rewind();
                    ch.write(b, at);
                    return 0;
                }
                case TRUNCATE -> {
                    return length - (HEADER + CHUNK);
                }
                case SWAP -> {
                    ByteBuffer first = ByteBuffer.allocate(CHUNK);
                    ByteBuffer second = ByteBuffer.allocate(CHUNK);
                    ch.read(first, start + HEADER);
                    ch.read(second, start + HEADER + CHUNK);
                    ch.write(second.flip(), start + HEADER);
                    ch.write(first.flip(), start + HEADER + CHUNK);
                    return 0;
                }
                default -> throw new AssertionError(kind);
            }
        }
    }

    static List<Path> files(List<Path> dirs, String regex) {
        List<Path> out = new ArrayList<>();
        for (Path dir : dirs) {
            out.addAll(EncryptionJob.files(dir, regex));
        }
        Collections.sort(out);
        return out;
    }

    static long[] readIndex(Path index) throws IOException {
        byte[] bytes = Files.readAllBytes(index);
        long[] offsets = new long[bytes.length / 8];
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            for (int i = 0; i < offsets.length; i++) {
                offsets[i] = in.readLong();
            }
        }
        return offsets;
    }

    static void writeIndex(Path index, long[] offsets) throws IOException {
        try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(index))) {
            for (long o : offsets) {
                out.writeLong(o);
            }
        }
    }

    /**
     * In an executor's task: sorts {@code SPILL_RECORDS} records by partition through Spark's
     * {@code ExternalSorter}, which spills them (more than {@code SPILL_THRESHOLD}) in batches; changes
     * the first batch of the spill file as {@code kind} says (none if null); then merges the spill and
     * the records in memory and returns what was changed, then each partition's digest.
     */
    static Iterator<String> spillAndMerge(Kind kind) throws IOException {
        SparkEnv env = SparkEnv.get();
        File[] localDirs = env.blockManager().diskBlockManager().localDirs();
        Set<Path> before = new HashSet<>(spillFiles(localDirs));
        ExternalSorter<Integer, byte[], byte[]> sorter = new ExternalSorter<>(TaskContext.get(), Option.empty(),
                Option.apply(new HashPartitioner(2)), Option.empty(), env.serializer());
        try {
            Iterator<Tuple2<Integer, byte[]>> records = bytePairs(7, SPILL_THRESHOLD + SPILL_BATCH);
            sorter.insertAll(new scala.collection.AbstractIterator<Product2<Integer, byte[]>>() {
                @Override
                public boolean hasNext() {
                    return records.hasNext();
                }

                @Override
                public Product2<Integer, byte[]> next() {
                    return records.next();
                }
            });
            List<Path> spills = new ArrayList<>(spillFiles(localDirs));
            spills.removeAll(before);
            if (spills.isEmpty()) {
                throw new IllegalStateException("no spill file under " + Arrays.toString(localDirs));
            }
            // Memory can make the sorter spill before SPILL_THRESHOLD records too: the largest file.
            spills.sort(Comparator.comparingLong(p -> p.toFile().length()));
            Path spill = spills.get(spills.size() - 1);
            String what = spill.getFileName() + " (" + Files.size(spill) + " bytes, " + spills.size()
                    + " spill file(s))";
            if (kind != null) {
                // The first batch is the first stream of the file (it holds SPILL_BATCH records,
                // many chunks): changed within its first two chunks, or the file cut after its first.
                long cut = tamperStream(spill, 0, Files.size(spill), kind);
                if (cut > 0) {
                    try (FileChannel ch = FileChannel.open(spill, StandardOpenOption.WRITE)) {
                        ch.truncate(HEADER + CHUNK);
                    }
                }
            }
            long[] counts = new long[2];
            long[] hashes = new long[2];
            scala.collection.Iterator<Product2<Integer, byte[]>> merged = sorter.iterator();
            while (merged.hasNext()) {
                Product2<Integer, byte[]> r = merged.next();
                int p = Math.floorMod(r._1().hashCode(), 2);
                counts[p]++;
                hashes[p] += (r._1() * 0x9e37_79b9_7f4a_7c15L) ^ Arrays.hashCode(r._2());
            }
            return List.of(what, "0:" + counts[0] + ":" + Long.toHexString(hashes[0]),
                    "1:" + counts[1] + ":" + Long.toHexString(hashes[1])).iterator();
        } finally {
            sorter.stop();
        }
    }

    private static List<Path> spillFiles(File[] localDirs) {
        List<Path> out = new ArrayList<>();
        for (File dir : localDirs) {
            try (Stream<Path> paths = Files.walk(dir.toPath())) {
                paths.filter(p -> p.getFileName().toString().startsWith("temp_shuffle_")).forEach(out::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }
}
