package io.sealpipe.it.spark;

import io.sealpipe.commons.SealpipeCryptoCipher;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.storage.RDDInfo;
import org.apache.spark.storage.StorageLevel;
import scala.Tuple2;

/**
 * The job the tests and the timing run: seeded records through a shuffle with map-side combine
 * ({@code reduceByKey}, forced to spill), a broadcast lookup table, a sort ({@code sortByKey}, a
 * second shuffle) and a {@code DISK_ONLY} copy of the result read back. Everything it writes
 * through Spark's IO encryption: shuffle files, spill files, disk blocks.
 */
final class EncryptionJob {
    static final String SEALPIPE_CIPHER = SealpipeCryptoCipher.class.getName();

    static final long SEED = 0x5ea1_91be_5ea1L;
    static final int MAP_PARTITIONS = 4;
    static final int REDUCE_PARTITIONS = 4;
    static final int RECORDS_PER_PARTITION = 750_000;
    static final int KEYS = 200_000;
    /** 4 MiB of ints: two pieces of Spark's default 4 MiB broadcast block. */
    static final int TABLE_SIZE = 1 << 20;
    /** Forces a spill every 100,000 records in each map task's combine (7 per task). */
    static final int SPILL_THRESHOLD = 100_000;

    /** How Spark encrypts its IO in a run. */
    enum Encryption {
        /** {@code spark.io.encryption.enabled=false}. */
        OFF(false, null),
        /** Encryption on Commons Crypto's default cipher list (OpenSSL, then JCE). */
        DEFAULT(true, null),
        /** Encryption on sealpipe's cipher only. */
        SEALPIPE(true, SEALPIPE_CIPHER);

        final boolean enabled;
        final String cipherClasses;

        Encryption(boolean enabled, String cipherClasses) {
            this.enabled = enabled;
            this.cipherClasses = cipherClasses;
        }
    }

    private EncryptionJob() {}

    /**
     * A local-mode configuration with its own {@code spark.local.dir}, so that the files of one
     * run can be found; {@code cipherClasses} null leaves Commons Crypto's default list.
     */
    static SparkConf conf(String name, boolean encrypted, String cipherClasses, Path localDir) {
        SparkConf conf = new SparkConf(false)
                .setMaster("local[2]")
                .setAppName("sealpipe-it-" + name)
                .set("spark.ui.enabled", "false")
                .set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1")
                .set("spark.local.dir", localDir.toString())
                .set("spark.shuffle.spill.numElementsForceSpillThreshold", Integer.toString(SPILL_THRESHOLD))
                .set("spark.io.encryption.enabled", Boolean.toString(encrypted));
        if (cipherClasses != null) {
            conf.set("spark.io.encryption.commons.config.cipher.classes", cipherClasses);
        }
        return conf;
    }

    static SparkConf conf(String name, Encryption encryption, Path localDir) {
        return conf(name, encryption.enabled, encryption.cipherClasses, localDir);
    }

    /** Sums every task's spill metrics; read it after the context stopped (which drains the bus). */
    static final class SpillListener extends SparkListener {
        final AtomicLong memoryBytesSpilled = new AtomicLong();
        final AtomicLong diskBytesSpilled = new AtomicLong();

        @Override
        public void onTaskEnd(SparkListenerTaskEnd taskEnd) {
            if (taskEnd.taskMetrics() != null) {
                memoryBytesSpilled.addAndGet(taskEnd.taskMetrics().memoryBytesSpilled());
                diskBytesSpilled.addAndGet(taskEnd.taskMetrics().diskBytesSpilled());
            }
        }
    }

    /** One partition of the sorted result: its size, first and last key, an order-sensitive hash. */
    record Summary(int partition, long records, int firstKey, int lastKey, long hash, boolean sorted)
            implements Serializable {}

    /**
     * What a run produced, read from the {@code DISK_ONLY} copy; {@code rdd} keeps that copy and
     * its shuffles from Spark's cleaner (which removes the files of what is no longer referenced).
     */
    record Result(JavaPairRDD<Integer, Long> rdd, long count, List<Summary> summaries, long total, long diskSize,
            long memSize) {}

    /** The broadcast table: seeded, so every run and the expected values agree. */
    static int[] table() {
        SplittableRandom random = new SplittableRandom(SEED ^ 0x7ab1e);
        int[] table = new int[TABLE_SIZE];
        for (int i = 0; i < table.length; i++) {
            table[i] = random.nextInt(1 << 20);
        }
        return table;
    }

    private static Iterator<Tuple2<Integer, Long>> records(int partition) {
        SplittableRandom random = new SplittableRandom(SEED + partition);
        return new Iterator<>() {
            private int left = RECORDS_PER_PARTITION;

            @Override
            public boolean hasNext() {
                return left > 0;
            }

            @Override
            public Tuple2<Integer, Long> next() {
                left--;
                return new Tuple2<>(random.nextInt(KEYS), (long) random.nextInt(1_000_000));
            }
        };
    }

    /**
     * The expected sum of the result's values (every record's value, plus the table entry of
     * each distinct key) and the number of distinct keys, computed without Spark.
     */
    static long[] expected(int[] table) {
        boolean[] seen = new boolean[KEYS];
        long total = 0;
        long keys = 0;
        for (int p = 0; p < MAP_PARTITIONS; p++) {
            for (Iterator<Tuple2<Integer, Long>> it = records(p); it.hasNext();) {
                Tuple2<Integer, Long> r = it.next();
                total += r._2();
                if (!seen[r._1()]) {
                    seen[r._1()] = true;
                    keys++;
                    total += table[r._1() % table.length];
                }
            }
        }
        return new long[] {total, keys};
    }

    /** Runs the job on {@code sc}; the {@code DISK_ONLY} RDD stays persisted until the context stops. */
    static Result run(JavaSparkContext sc, int[] tableValues) {
        List<Integer> partitions = new ArrayList<>();
        for (int p = 0; p < MAP_PARTITIONS; p++) {
            partitions.add(p);
        }
        Broadcast<int[]> table = sc.broadcast(tableValues);
        JavaPairRDD<Integer, Long> sorted = sc.parallelize(partitions, MAP_PARTITIONS)
                .flatMapToPair(EncryptionJob::records)
                .reduceByKey(Long::sum, REDUCE_PARTITIONS)
                .mapToPair(kv -> new Tuple2<>(kv._1(), kv._2() + table.value()[kv._1() % table.value().length]))
                .sortByKey(true, REDUCE_PARTITIONS)
                .persist(StorageLevel.DISK_ONLY());
        long count = sorted.count(); // computes the blocks and writes them to disk
        List<Summary> summaries = sorted.mapPartitionsWithIndex(EncryptionJob::summarize, true).collect();
        long total = sorted.values().reduce(Long::sum);
        long diskSize = 0;
        long memSize = 0;
        for (RDDInfo info : sc.sc().getRDDStorageInfo()) {
            if (info.id() == sorted.id()) {
                diskSize += info.diskSize();
                memSize += info.memSize();
            }
        }
        return new Result(sorted, count, summaries, total, diskSize, memSize);
    }

    private static Iterator<Summary> summarize(int partition, Iterator<Tuple2<Integer, Long>> it) {
        long records = 0;
        long hash = 17;
        int first = -1;
        int last = -1;
        boolean sorted = true;
        while (it.hasNext()) {
            Tuple2<Integer, Long> kv = it.next();
            if (records == 0) {
                first = kv._1();
            } else if (kv._1() <= last) {
                sorted = false;
            }
            last = kv._1();
            hash = hash * 1_000_003L + kv._1() * 0x9e37_79b9_7f4a_7c15L + kv._2();
            records++;
        }
        return List.of(new Summary(partition, records, first, last, hash, sorted)).iterator();
    }

    /** A small shuffle: enough to open one encrypted stream. */
    static List<Tuple2<Integer, Integer>> smallShuffle(JavaSparkContext sc) {
        List<Integer> numbers = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            numbers.add(i);
        }
        return sc.parallelize(numbers, 2).mapToPair(i -> new Tuple2<>(i % 10, 1)).reduceByKey(Integer::sum).collect();
    }

    /** The regular files under {@code dir} whose name matches {@code regex}, sorted by path. */
    static List<Path> files(Path dir, String regex) {
        try (Stream<Path> paths = Files.walk(dir)) {
            return paths.filter(Files::isRegularFile)
                    .filter(p -> p.getFileName().toString().matches(regex))
                    .sorted(Comparator.naturalOrder())
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes {@code dir} and everything in it, if it exists. */
    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
