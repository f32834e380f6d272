package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Spark SQL writes Parquet to {@code sfile://} (sealpipe's {@code SealedFileSystem} over the local
 * file system, its key from Hadoop's KMS, {@link Kms}) from executors that are JVMs of their own
 * ({@code local-cluster}), which load sealpipe only from {@code spark.executor.extraClassPath}.
 * Faults during the write: a task's first attempt that fails on purpose after part of its file is
 * written, and an executor process killed (SIGKILL) while it writes. Each job gives the rows of the
 * same job written to {@code file://} without a fault, and every file left under the output
 * directory either reads whole (the committed files) or fails to read: none reads as a shorter
 * file.
 */
@Tag("cluster")
class SparkClusterSealedFilesTest {
    private static final String NAME = "sealed-files";
    private static final int ROWS = 200_000;
    private static final byte[] PARQUET_MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);
    private static final String FAILURE = "sealpipe-it: the first attempt fails on purpose";

    private static Kms kms;

    private Path dir;
    private String key;
    private JavaSparkContext sc;
    private SparkSession spark;
    private int partitions;

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

    /** A key of the test's own in the KMS. */
    @BeforeEach
    void makeKey(TestInfo test) throws Exception {
        dir = Cluster.home(NAME).resolve(test.getTestMethod().get().getName());
        Files.createDirectories(dir);
        key = "data-" + test.getTestMethod().get().getName().toLowerCase(java.util.Locale.ROOT); // the KMS takes no uppercase
        KeyProvider provider = provider();
        try {
            provider.createKey(key, new KeyProvider.Options(new Configuration(false)).setBitLength(256));
            provider.flush();
        } finally {
            provider.close();
        }
    }

    @AfterEach
    void stop(TestInfo test) throws IOException {
        if (sc != null) {
            sc.stop();
        }
        FileSystem.closeAll();
        Cluster.keepLogs(dir, NAME + "/" + test.getTestMethod().get().getName());
    }

    /**
     * Partition 1's first attempt throws from a UDF at row 80,000 of its 100,000, once its sealed
     * Parquet file holds stored bytes (the UDF checks, and leaves a note of the size); the retry
     * writes the whole partition. The job succeeds with the plain run's rows.
     */
    @Test
    void aFirstAttemptFailingAfterPartOfItsFileLeavesNoShorterFile() throws Exception {
        start("fail-once", 2);
        Path raw = dir.resolve("sealed");
        Path notes = Files.createDirectories(dir.resolve("notes"));
        FailedTasks failed = new FailedTasks();
        sc.sc().addSparkListener(failed);
        spark.udf().register("fail_once", new FailOnce(notes.toString(), raw.toString(), 1, ROWS / 2 + ROWS * 4 / 10,
                kms.providerUri(), key), DataTypes.LongType);

        String plain = "file://" + dir.resolve("plain");
        String sealed = "sfile://" + raw;
        table(spark, "id").write().parquet(plain);
        table(spark, "fail_once(id)").write().parquet(sealed);

        Cluster.await(() -> failed.purposeful.get() >= 1, "the failed attempt's task end event");
        String note = Files.readString(notes.resolve("partial"));
        System.out.println("failed attempt: " + note);
        String[] noted = note.split("\t", 3);
        // More than a row group (256 KiB) stored, and that part, read through sfile:// in the
        // failing task itself (before Spark's abort deletes it), fails instead of reading as a
        // shorter file.
        assertTrue(Long.parseLong(noted[0]) > 256 << 10, "the failed attempt had stored part of its file: " + note);
        assertTrue(noted[1].startsWith("fails: ") && !noted[1].contains("ChecksumException"),
                "the failed attempt's partial file read, or failed only on the local file system's checksum: " + note);
        assertEquals(1, failed.purposeful.get(), "one attempt failed on purpose");

        checkRows(plain, sealed);
        checkEveryFile(raw);
    }

    /**
     * While partition 0's first attempt is writing (it has written 40,000 of its 50,000 rows and
     * waits in a UDF, after leaving a note naming its pid), that executor's process is killed with
     * SIGKILL. The job finishes: its rows are the plain run's, and every file in the output reads.
     */
    @Test
    void anExecutorKilledWhileWritingLeavesAFullResult() throws Exception {
        // The committer keeps _temporary (the killed attempt's file in it) for checkEveryFile.
        start("kill", 4, "spark.hadoop.mapreduce.fileoutputcommitter.cleanup.skipped", "true");
        Path raw = dir.resolve("sealed");
        Path notes = Files.createDirectories(dir.resolve("notes"));
        List<Long> pids = Cluster.probe(sc, dir.resolve("meet")).stream().map(Cluster.Report::pid).toList();
        assertEquals(2, pids.stream().distinct().count(), "two executor processes: " + pids);
        FailedTasks events = new FailedTasks();
        sc.sc().addSparkListener(events);
        spark.udf().register("stall_once", new StallOnce(notes.toString(), 0, ROWS / 5), DataTypes.LongType);

        String plain = "file://" + dir.resolve("plain");
        String sealed = "sfile://" + raw;
        table(spark, "id").write().parquet(plain);
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try {
            CompletableFuture<Void> write = CompletableFuture.runAsync(
                    () -> table(spark, "stall_once(id)").write().parquet(sealed), writer);
            Path started = notes.resolve("started");
            Cluster.await(() -> Files.exists(started) || write.isDone(), "the stalled attempt's note");
            assertFalse(write.isDone(), "the write waits for the stalled attempt: " + write);
            long pid = Long.parseLong(Files.readString(started).trim());
            assertTrue(pids.contains(pid), "the writing task runs in an executor " + pids + ": " + pid);
            ProcessHandle executor = ProcessHandle.of(pid).orElseThrow();
            assertTrue(executor.destroyForcibly(), "SIGKILL to " + pid);
            executor.onExit().get(Cluster.DEADLINE.toMinutes(), TimeUnit.MINUTES);
            write.get(Cluster.DEADLINE.toMinutes(), TimeUnit.MINUTES);
        } finally {
            Files.writeString(notes.resolve("release"), "go"); // in case the kill did not happen
            writer.shutdownNow();
        }
        Cluster.await(() -> events.executorsRemoved.get() >= 1, "the killed executor's removal");
        checkRows(plain, sealed);
        assertTrue(checkEveryFile(raw) >= 1, "the killed attempt's file was not among those checked");
    }

    private void start(String name, int partitions, String... settings) throws Exception {
        SparkConf conf = Cluster.conf(name, dir)
                .set("spark.sql.shuffle.partitions", Integer.toString(partitions))
                .set("spark.hadoop.fs.sfile.impl", SealedFileSystem.class.getName())
                .set("spark.hadoop." + SealedFileSystem.wrapsKey("sfile"), "file")
                .set("spark.hadoop." + SealedFileSystem.KEY_PROVIDER_PATH, kms.providerUri())
                .set("spark.hadoop." + SealedFileSystem.KEY_NAME, key)
                .set("spark.hadoop." + SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS, "true")
                // Row groups of 256 KiB: a task stores several before the fault.
                .set("spark.hadoop.parquet.block.size", Integer.toString(256 << 10));
        for (int i = 0; i < settings.length; i += 2) {
            conf.set(settings[i], settings[i + 1]);
        }
        this.partitions = partitions;
        sc = Cluster.start(conf, dir);
        spark = SparkSession.builder().getOrCreate();
    }

    /** Rows in id order, in {@code partitions} partitions; {@code idExpression} sees each id. */
    private Dataset<Row> table(SparkSession spark, String idExpression) {
        return spark.range(0, ROWS, 1, partitions).selectExpr(idExpression + " AS id", "id % 100 AS bucket",
                "sha2(cast(id AS string), 256) AS text", "id * 0.25 AS amount");
    }

    private void checkRows(String plain, String sealed) {
        Dataset<Row> sealedTable = spark.read().parquet(sealed);
        Dataset<Row> plainTable = spark.read().parquet(plain);
        assertEquals(ROWS, sealedTable.count(), "rows in " + sealed);
        assertEquals(0, sealedTable.exceptAll(plainTable).count(), "rows of the sealed data set not in the plain one");
        assertEquals(0, plainTable.exceptAll(sealedTable).count(), "rows of the plain data set not in the sealed one");
    }

    /**
     * Every stored file under {@code raw} (the local file system's {@code .crc} side files aside),
     * read through {@code sfile://}: the committed files (directly under {@code raw}) read whole,
     * each part file decrypts (with the key, by {@code GcmStreams}) to a Parquet file; anything
     * else (an attempt's leftovers under {@code _temporary}) must fail to read; returns how many
     * such files there were.
     */
    private int checkEveryFile(Path raw) throws Exception {
        FileSystem fs = FileSystem.newInstance(URI.create("sfile:///"), withoutLocalChecksums(sc.hadoopConfiguration()));
        Map<String, String> outcome = new TreeMap<>();
        List<Path> stored;
        try (Stream<Path> files = Files.walk(raw)) {
            stored = files.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().endsWith(".crc"))
                    .sorted().toList();
        }
        int parts = 0;
        int uncommitted = 0;
        for (Path file : stored) {
            boolean committed = file.getParent().equals(raw);
            org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path("sfile://" + file);
            String read;
            try (InputStream in = fs.open(path)) {
                long length = in.transferTo(java.io.OutputStream.nullOutputStream());
                long listed = fs.getFileStatus(path).getLen();
                read = length == listed ? "reads " + length : "reads " + length + " of " + listed;
            } catch (IOException e) {
                read = "fails: " + e;
            }
            outcome.put(raw.relativize(file).toString(), read);
            if (committed) {
                assertTrue(read.startsWith("reads ") && !read.contains(" of "), file + " " + read);
                if (file.getFileName().toString().startsWith("part-")) {
                    parts++;
                    byte[] parquet = open(Files.readAllBytes(file));
                    assertArrayEquals(PARQUET_MAGIC, Arrays.copyOf(parquet, 4), file + " opens to a Parquet file");
                    assertArrayEquals(PARQUET_MAGIC, Arrays.copyOfRange(parquet, parquet.length - 4, parquet.length),
                            file + " ends as a Parquet file");
                }
            } else {
                assertTrue(read.startsWith("fails: ") && !read.contains("ChecksumException"),
                        "a file outside the committed output reads, or fails only on the local file system's checksum: "
                                + file + " " + read);
                uncommitted++;
            }
        }
        assertTrue(parts > 0, "part files under " + raw + ": " + outcome);
        System.out.println("stored files under " + raw + ": " + outcome);
        fs.close();
        return uncommitted;
    }

    /**
     * {@code conf} with {@code file://} as the raw local file system (a file system of its own, not
     * the cached one): a file still being written has no matching {@code .crc}, and Hadoop's
     * checksum layer would fail its read before sealpipe's authentication is ever asked.
     */
    static Configuration withoutLocalChecksums(Configuration conf) {
        Configuration raw = new Configuration(conf);
        raw.set("fs.file.impl", org.apache.hadoop.fs.RawLocalFileSystem.class.getName());
        raw.setBoolean("fs.file.impl.disable.cache", true);
        raw.setBoolean("fs.sfile.impl.disable.cache", true);
        return raw;
    }

    private static KeyProvider provider() throws IOException {
        return KeyProviderFactory.get(URI.create(kms.providerUri()), new Configuration(false));
    }

    /** Opens a stored file with the key's current version, read from the KMS. */
    private byte[] open(byte[] stored) throws IOException {
        KeyProvider provider = provider();
        byte[] material;
        try {
            material = provider.getCurrentKey(key).getMaterial();
        } finally {
            provider.close();
        }
        GcmStreams streams = GcmStreams.builder().key(material).build();
        Arrays.fill(material, (byte) 0);
        try (InputStream in = streams.decrypt(new ByteArrayInputStream(stored))) {
            return in.readAllBytes();
        }
    }

    /** Counts the attempts that failed with {@link #FAILURE} and the executors removed. */
    static final class FailedTasks extends SparkListener {
        final AtomicInteger purposeful = new AtomicInteger();
        final AtomicInteger executorsRemoved = new AtomicInteger();

        @Override
        public void onTaskEnd(SparkListenerTaskEnd taskEnd) {
            if (taskEnd.reason() instanceof ExceptionFailure failure && failure.toErrorString().contains(FAILURE)) {
                purposeful.incrementAndGet();
            }
        }

        @Override
        public void onExecutorRemoved(SparkListenerExecutorRemoved removed) {
            executorsRemoved.incrementAndGet();
        }
    }

    /**
     * The identity, except in the first attempt of one partition's task at one id: there it notes
     * the stored size of the task's file (under the output's {@code _temporary}) and throws.
     */
    static final class FailOnce implements UDF1<Long, Long> {
        private final String notes;
        private final String output;
        private final int partition;
        private final long failAt;
        private final String providerUri;
        private final String keyName;

        FailOnce(String notes, String output, int partition, long failAt, String providerUri, String keyName) {
            this.notes = notes;
            this.output = output;
            this.partition = partition;
            this.failAt = failAt;
            this.providerUri = providerUri;
            this.keyName = keyName;
        }

        @Override
        public Long call(Long id) throws Exception {
            TaskContext task = TaskContext.get();
            if (id == failAt && task.attemptNumber() == 0 && task.partitionId() == partition) {
                String prefix = String.format("part-%05d", partition);
                List<Path> files;
                try (Stream<Path> all = Files.walk(Path.of(output))) {
                    files = all.filter(Files::isRegularFile)
                            .filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
                }
                long size = 0;
                Path largest = null;
                for (Path f : files) {
                    if (largest == null || Files.size(f) > size) {
                        size = Files.size(f);
                        largest = f;
                    }
                }
                note(Path.of(notes).resolve("partial"), size + "\t" + readThroughSealed(largest) + "\t" + files);
                throw new IllegalStateException(FAILURE + " at id " + id + " with " + size + " bytes stored");
            }
            return id;
        }

        /** "reads N" or "fails: why": {@code stored} read whole through a sealed file system of its own. */
        private String readThroughSealed(Path stored) {
            if (stored == null) {
                return "fails: no file";
            }
            Configuration conf = withoutLocalChecksums(new Configuration());
            conf.set("fs.sfile.impl", SealedFileSystem.class.getName());
            conf.set(SealedFileSystem.wrapsKey("sfile"), "file");
            conf.set(SealedFileSystem.KEY_PROVIDER_PATH, providerUri);
            conf.set(SealedFileSystem.KEY_NAME, keyName);
            try (FileSystem fs = FileSystem.newInstance(URI.create("sfile:///"), conf);
                    InputStream in = fs.open(new org.apache.hadoop.fs.Path("sfile://" + stored))) {
                return "reads " + in.transferTo(java.io.OutputStream.nullOutputStream());
            } catch (IOException e) {
                return "fails: " + e;
            }
        }
    }

    /**
     * The identity, except in the first attempt of one partition's task at one id: there it notes
     * its process id and waits for a {@code release} note, which the test writes only after the
     * kill (so this attempt never finishes).
     */
    static final class StallOnce implements UDF1<Long, Long> {
        private final String notes;
        private final int partition;
        private final long stallAt;

        StallOnce(String notes, int partition, long stallAt) {
            this.notes = notes;
            this.partition = partition;
            this.stallAt = stallAt;
        }

        @Override
        public Long call(Long id) throws Exception {
            TaskContext task = TaskContext.get();
            if (id == stallAt && task.attemptNumber() == 0 && task.partitionId() == partition) {
                note(Path.of(notes).resolve("started"), Long.toString(ProcessHandle.current().pid()));
                Path release = Path.of(notes).resolve("release");
                long end = System.nanoTime() + Duration.ofMinutes(10).toNanos();
                while (!Files.exists(release) && System.nanoTime() < end) {
                    Thread.sleep(50);
                }
            }
            return id;
        }
    }

    /** Writes a note whole: to a temporary name, then moved into place. */
    static void note(Path note, String text) throws IOException {
        Path tmp = note.resolveSibling(note.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, note, StandardCopyOption.ATOMIC_MOVE);
    }
}
