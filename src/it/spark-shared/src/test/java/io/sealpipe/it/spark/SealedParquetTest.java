package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Spark SQL writes a Parquet data set to {@code sfile://} (sealpipe's {@code SealedFileSystem}
 * over the local file system, its key in a JCEKS key provider) and reads it back with a filter
 * and a projection, so that Parquet reads footers, skips row groups and seeks to the two columns
 * it needs: the results equal those of the same job on {@code file://}, the sealed run reads a
 * small part of the plaintext, and every stored file is a sealed message with a Parquet file
 * inside. Parquet 1.14 and 1.15 (Spark 4.0) call {@code hflush()} when they close a file, which a
 * sealed file refuses unless {@code sealpipe.fs.downgrade.syncable.exceptions} is set: without it
 * such a write fails naming the option and leaves no committed output. With
 * {@code sealpipe.fs.compress=snappy}, a JSON data set in one file is stored compressed and read
 * back in several splits, each seeking into the compressed content.
 */
class SealedParquetTest {
    private static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target"));
    private static final String KEY = "data";
    private static final int ROWS = 200_000;
    private static final byte[] PARQUET_MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);

    private Path dir;
    private Path keystore;
    private SparkSession spark;

    @BeforeEach
    void makeKey() throws Exception {
        dir = TARGET.resolve("sealed-parquet");
        EncryptionJob.deleteTree(dir);
        Files.createDirectories(dir);
        keystore = dir.resolve("keys.jceks");
        KeyProvider provider = provider();
        provider.createKey(KEY, new KeyProvider.Options(new Configuration(false)).setBitLength(256));
        provider.flush();
    }

    @AfterEach
    void stopSpark() throws IOException {
        if (spark != null) {
            spark.stop();
        }
        FileSystem.closeAll(); // the next session's sealed file system reads its own configuration
    }

    @Test
    void parquetOnSealedFilesGivesThePlainResultsAndReadsOnlyWhatTheFilterNeeds() throws Exception {
        spark = session(true, "none");
        String sealed = "sfile://" + dir.resolve("sealed").toAbsolutePath();
        String plain = "file://" + dir.resolve("plain").toAbsolutePath();
        table(spark).write().parquet(sealed);
        table(spark).write().parquet(plain);

        List<Path> parts = partFiles(dir.resolve("sealed"));
        assertFalse(parts.isEmpty(), "part files under " + dir.resolve("sealed"));
        long plaintext = 0;
        for (Path part : parts) {
            byte[] stored = Files.readAllBytes(part);
            assertFalse(Arrays.equals(PARQUET_MAGIC, Arrays.copyOf(stored, 4)), part + " is stored in the clear");
            byte[] parquet = open(stored);
            assertArrayEquals(PARQUET_MAGIC, Arrays.copyOf(parquet, 4), part + " opens to a Parquet file");
            assertArrayEquals(PARQUET_MAGIC, Arrays.copyOfRange(parquet, parquet.length - 4, parquet.length), part.toString());
            plaintext += parquet.length;
        }

        Dataset<Row> sealedTable = spark.read().parquet(sealed);
        Dataset<Row> plainTable = spark.read().parquet(plain);
        assertEquals(ROWS, sealedTable.count());
        assertEquals(0, sealedTable.exceptAll(plainTable).count(), "rows of the sealed data set not in the plain one");
        assertEquals(0, plainTable.exceptAll(sealedTable).count(), "rows of the plain data set not in the sealed one");

        FileSystem.Statistics statistics = FileSystem.getStatistics("sfile", SealedFileSystem.class);
        long before = statistics.getBytesRead();
        List<Row> found = filtered(spark, sealed);
        long read = statistics.getBytesRead() - before;
        assertEquals(filtered(spark, plain), found, "the filtered, projected rows");
        assertEquals(100, found.size(), "rows 123000..123099");
        assertTrue(read > 0 && read < plaintext / 10,
                "the filtered read skips row groups and columns: " + read + " of " + plaintext + " plaintext bytes read");
        System.out.printf("sealed Parquet: %d part files, %d plaintext bytes; the filtered read read %d of them%n",
                parts.size(), plaintext, read);
    }

    @Test
    void withoutTheDowngradeAParquetVersionThatFlushesOnCloseFailsNamingTheOption() throws Exception {
        spark = session(false, "none");
        String sealed = "sfile://" + dir.resolve("strict").toAbsolutePath();
        if (flushesOnClose(org.apache.parquet.Version.VERSION_NUMBER)) {
            Exception e = assertThrows(Exception.class, () -> table(spark).write().parquet(sealed));
            String all = messages(e);
            assertTrue(all.contains(SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS + "=true"),
                    "the failure names the option: " + all);
            assertFalse(Files.exists(dir.resolve("strict/_SUCCESS")), "a failed write is not committed");
        } else {
            table(spark).write().parquet(sealed);
            assertEquals(ROWS, spark.read().parquet(sealed).count());
        }
    }

    /**
     * With {@code sealpipe.fs.compress=snappy}, a JSON data set written as one file is stored
     * compressed, listed with its uncompressed length, and read back in several splits, each
     * starting in the middle of the file (so the reader seeks into the compressed content): the
     * same rows as written.
     */
    @Test
    void compressedJsonSplitsAndReadsBackTheSameRows() throws Exception {
        spark = session(true, "snappy");
        String sealed = "sfile://" + dir.resolve("json").toAbsolutePath();
        Dataset<Row> rows = table(spark).drop("amount");
        rows.coalesce(1).write().json(sealed);

        List<Path> parts = partFiles(dir.resolve("json"));
        assertEquals(1, parts.size(), "one part file: " + parts);
        FileSystem fs = FileSystem.get(URI.create(sealed), spark.sparkContext().hadoopConfiguration());
        org.apache.hadoop.fs.Path part = new org.apache.hadoop.fs.Path(sealed, parts.get(0).getFileName().toString());
        long length = fs.getFileStatus(part).getLen();
        long stored = Files.size(parts.get(0));
        assertTrue(stored < length, "stored " + stored + " bytes of " + length + " uncompressed");

        Dataset<Row> back = spark.read().schema(rows.schema()).json(sealed);
        int splits = back.rdd().getNumPartitions();
        assertTrue(splits > 1, "the file is read in several splits: " + splits);
        assertEquals(ROWS, back.count());
        assertEquals(0, back.exceptAll(rows).count(), "rows read back that were not written");
        System.out.printf("compressed JSON: %d bytes stored for %d, read in %d splits%n", stored, length, splits);
    }

    /** Parquet 1.14.0 to 1.15.x call {@code hflush()} in {@code HadoopPositionOutputStream.close()}. */
    private static boolean flushesOnClose(String parquetVersion) {
        String[] v = parquetVersion.split("[.-]");
        int major = Integer.parseInt(v[0]);
        int minor = Integer.parseInt(v[1]);
        return major == 1 && (minor == 14 || minor == 15);
    }

    private SparkSession session(boolean downgrade, String compress) {
        return SparkSession.builder()
                .master("local[2]")
                .appName("sealed-parquet")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.hadoop.fs.sfile.impl", SealedFileSystem.class.getName())
                .config("spark.hadoop." + SealedFileSystem.wrapsKey("sfile"), "file")
                .config("spark.hadoop." + SealedFileSystem.KEY_PROVIDER_PATH, "jceks://file" + keystore.toAbsolutePath())
                .config("spark.hadoop." + SealedFileSystem.KEY_NAME, KEY)
                .config("spark.hadoop." + SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS, Boolean.toString(downgrade))
                .config("spark.hadoop." + SealedFileSystem.COMPRESS, compress)
                // Splits of at most 4 MiB: a file of tens of MiB is read by several tasks.
                .config("spark.sql.files.maxPartitionBytes", Integer.toString(4 << 20))
                // Row groups of 512 KiB: several per file, each with its own statistics to skip by.
                .config("spark.hadoop.parquet.block.size", Integer.toString(512 << 10))
                .getOrCreate();
    }

    /** Two partitions of rows in id order (so row groups have narrow id ranges), four columns. */
    private static Dataset<Row> table(SparkSession spark) {
        return spark.range(0, ROWS, 1, 2)
                .selectExpr("id", "id % 100 AS bucket", "sha2(cast(id AS string), 256) AS text", "id * 0.25 AS amount");
    }

    private static List<Row> filtered(SparkSession spark, String path) {
        return spark.read().parquet(path).where("id BETWEEN 123000 AND 123099").select("id", "amount")
                .orderBy("id").collectAsList();
    }

    private KeyProvider provider() throws IOException {
        return KeyProviderFactory.get(URI.create("jceks://file" + keystore.toAbsolutePath()), new Configuration(false));
    }

    /** Opens a stored file with the key's current version, as any implementation of the format can. */
    private byte[] open(byte[] stored) throws IOException {
        byte[] key = provider().getCurrentKey(KEY).getMaterial();
        GcmStreams streams = GcmStreams.builder().key(key).build();
        Arrays.fill(key, (byte) 0);
        try (InputStream in = streams.decrypt(new java.io.ByteArrayInputStream(stored))) {
            return in.readAllBytes();
        }
    }

    private static List<Path> partFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("part-")).sorted().toList();
        }
    }

    private static String messages(Throwable t) {
        StringBuilder all = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            all.append(c).append(" / ");
        }
        return all.toString();
    }
}
