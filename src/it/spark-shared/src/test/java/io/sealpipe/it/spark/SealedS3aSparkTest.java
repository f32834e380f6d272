package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedCommitterFactory;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.S3Server;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spark SQL on sealed objects in S3: a partitioned Parquet data set written to {@code ss3a://}
 * ({@code SealedFileSystem} over S3A, against S3Proxy on 127.0.0.1) and read back with a filter
 * on the partition column and a data column and a projection, compared with the same job on
 * plain {@code s3a://}: the same rows, every stored part object a sealed message with a Parquet
 * file inside, and no multipart upload left pending.
 *
 * <ul>
 *   <li>With Spark's default commit protocol (Hadoop's {@code FileOutputCommitter}, which
 *       renames task output into place: on S3 a copy of each object).
 *   <li>With S3A's magic committer, through spark-hadoop-cloud's {@code PathOutputCommitProtocol}
 *       and {@code BindingParquetOutputCommitter} and {@link SealedCommitterFactory} for the
 *       sealed scheme: tasks write sealed objects as multipart uploads under {@code __magic}
 *       that the job commit completes at their final names (no copy); the {@code _SUCCESS}
 *       object names the magic committer, and no {@code __magic} directory is left.
 *   <li>S3A's staging committers stage task output on the local disk and upload it as it is:
 *       refused before any task writes, with the reason and the committer to use: nothing is
 *       stored under the output path.
 * </ul>
 *
 * <p>Spark 3.5 on Hadoop 3.3.4's S3A (AWS SDK v1), Spark 4.0 on Hadoop 3.4.1's (SDK v2), each
 * with spark-hadoop-cloud of its line; S3Proxy's jar from system property {@code
 * sealpipe.it.s3proxy.jar}.
 */
class SealedS3aSparkTest {
    private static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target"));
    private static final String KEY = "data";
    private static final int ROWS = 200_000;
    private static final byte[] PARQUET_MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);
    private static final String SEALED = "ss3a://" + S3Server.BUCKET;
    private static final String PLAIN = "s3a://" + S3Server.BUCKET;

    private static S3Server server;
    private static Path keystore;
    private SparkSession spark;

    @BeforeAll
    static void startS3() throws Exception {
        Path dir = TARGET.resolve("sealed-s3a");
        EncryptionJob.deleteTree(dir);
        Files.createDirectories(dir);
        keystore = dir.resolve("keys.jceks");
        KeyProvider provider = provider();
        provider.createKey(KEY, new KeyProvider.Options(new Configuration(false)).setBitLength(256));
        provider.flush();
        server = S3Server.start();
    }

    @AfterAll
    static void stopS3() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void stopSpark() throws IOException {
        if (spark != null) {
            spark.stop();
        }
        FileSystem.closeAll(); // the next session's file systems read its own configuration
    }

    @Test
    void partitionedParquetWithTheDefaultCommitterGivesThePlainRows() throws Exception {
        spark = session(Map.of());
        writeAndCompare("default");
    }

    @Test
    void partitionedParquetWithTheMagicCommitterGivesThePlainRows() throws Exception {
        spark = session(magicCommitter("magic"));
        writeAndCompare("magic");
        for (String root : List.of(PLAIN + "/sealed-magic", PLAIN + "/plain-magic")) {
            String success = new String(readAll(PLAIN, root + "/_SUCCESS"), StandardCharsets.UTF_8);
            assertTrue(success.matches("(?s).*\"committer\"\\s*:\\s*\"magic\".*"), () -> root + "/_SUCCESS: " + success);
            for (FileStatus child : wrapped().listStatus(new org.apache.hadoop.fs.Path(root))) {
                // Hadoop 3.3's __magic, 3.4's __magic_job-<id>
                assertFalse(child.getPath().getName().startsWith("__magic"), () -> child.getPath() + " is left");
            }
        }
    }

    @Test
    void aStagingCommitterIsRefusedBeforeAnyTaskWrites() throws Exception {
        spark = session(magicCommitter("directory"));
        Exception e = assertThrows(Exception.class, () -> table(spark).write().partitionBy("part").parquet(SEALED + "/staged"));
        String all = messages(e);
        assertTrue(all.contains("would not be sealed") && all.contains("fs.s3a.committer.name=magic"), all);
        assertFalse(wrapped().exists(new org.apache.hadoop.fs.Path(PLAIN + "/staged")), "a refused write left objects");
        assertEquals(List.of(), server.pendingUploads("staged"), "pending uploads");
    }

    /**
     * Writes the table partitioned to {@code sealed-NAME} on {@code ss3a} and {@code plain-NAME} on
     * {@code s3a}, checks the stored objects, and compares the two data sets whole and filtered.
     */
    private void writeAndCompare(String name) throws Exception {
        String sealed = SEALED + "/sealed-" + name;
        String plain = PLAIN + "/plain-" + name;
        table(spark).write().partitionBy("part").parquet(sealed);
        table(spark).write().partitionBy("part").parquet(plain);

        List<String> parts = partObjects(PLAIN + "/sealed-" + name);
        assertEquals(partObjects(plain).size(), parts.size(), "part objects, sealed and plain: " + parts);
        assertTrue(parts.size() >= 4, "a part object in each partition: " + parts);
        for (String part : parts) {
            byte[] stored = readAll(PLAIN, part);
            assertFalse(Arrays.equals(PARQUET_MAGIC, Arrays.copyOf(stored, 4)), part + " is stored in the clear");
            byte[] parquet = open(stored);
            assertArrayEquals(PARQUET_MAGIC, Arrays.copyOf(parquet, 4), part + " opens to a Parquet file");
            assertArrayEquals(PARQUET_MAGIC, Arrays.copyOfRange(parquet, parquet.length - 4, parquet.length), part);
        }

        Dataset<Row> sealedTable = spark.read().parquet(sealed);
        Dataset<Row> plainTable = spark.read().parquet(plain);
        assertEquals(ROWS, sealedTable.count());
        assertEquals(0, sealedTable.exceptAll(plainTable).count(), "rows of the sealed data set not in the plain one");
        assertEquals(0, plainTable.exceptAll(sealedTable).count(), "rows of the plain data set not in the sealed one");
        List<Row> found = filtered(sealed);
        assertEquals(filtered(plain), found, "the filtered, projected rows");
        assertEquals(250, found.size(), "rows 123000..123999 of partition 1");
        assertEquals(List.of(), server.pendingUploads(""), "pending uploads");

        // The data set's summary (one flat listing of S3A's) counts as plain S3A's does, with
        // the plaintext lengths the sealed listing gives.
        FileSystem sealedFs = FileSystem.get(URI.create(SEALED + "/"), spark.sparkContext().hadoopConfiguration());
        ContentSummary summary = sealedFs.getContentSummary(new org.apache.hadoop.fs.Path(sealed));
        ContentSummary plainSummary = wrapped().getContentSummary(new org.apache.hadoop.fs.Path(plain));
        assertEquals(plainSummary.getFileCount(), summary.getFileCount(), "files");
        assertEquals(plainSummary.getDirectoryCount(), summary.getDirectoryCount(), "directories");
        long listed = 0;
        RemoteIterator<LocatedFileStatus> files = sealedFs.listFiles(new org.apache.hadoop.fs.Path(sealed), true);
        while (files.hasNext()) {
            listed += files.next().getLen();
        }
        assertEquals(listed, summary.getLength(), "the plaintext lengths");
        // A file's summary (S3A's HEAD, whose metadata is the SDK's own: 1.x's on hadoop-aws
        // 3.3.4, 2.x's on 3.4.1) has its plaintext length and its stored length as space.
        String part = parts.get(0);
        org.apache.hadoop.fs.Path sealedPart = new org.apache.hadoop.fs.Path(SEALED + part.substring(PLAIN.length()));
        ContentSummary file = sealedFs.getContentSummary(sealedPart);
        assertEquals(1, file.getFileCount(), sealedPart.toString());
        assertEquals(0, file.getDirectoryCount(), sealedPart.toString());
        assertEquals(open(readAll(PLAIN, part)).length, file.getLength(), "the plaintext length of " + sealedPart);
        assertEquals(wrapped().getFileStatus(new org.apache.hadoop.fs.Path(part)).getLen(), file.getSpaceConsumed(),
                "the stored length of " + sealedPart);
        System.out.printf("%s committer: %d sealed part objects on S3, the filtered read found %d rows%n", name,
                parts.size(), found.size());
    }

    /** Spark's settings for spark-hadoop-cloud's commit protocol and S3A committer {@code name}, sealed or not. */
    private static Map<String, String> magicCommitter(String name) {
        return Map.of(
                "spark.sql.sources.commitProtocolClass", "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol",
                "spark.sql.parquet.output.committer.class", "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter",
                "spark.hadoop.mapreduce.outputcommitter.factory.scheme.ss3a", SealedCommitterFactory.class.getName(),
                "spark.hadoop.fs.s3a.committer.name", name,
                "spark.hadoop.fs.s3a.committer.magic.enabled", "true",
                // S3Proxy refuses S3A's ListMultipartUploads (it sends max-uploads): the job
                // commit must not list them; the test asks S3Proxy's store instead.
                "spark.hadoop.fs.s3a.committer.abort.pending.uploads", "false",
                "spark.hadoop.fs.s3a.committer.staging.conflict-mode", "fail");
    }

    private SparkSession session(Map<String, String> extra) {
        SparkSession.Builder builder = SparkSession.builder()
                .master("local[2]")
                .appName("sealed-s3a")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.hadoop.fs.ss3a.impl", SealedFileSystem.class.getName())
                .config("spark.hadoop." + SealedFileSystem.wrapsKey("ss3a"), "s3a")
                .config("spark.hadoop." + SealedFileSystem.KEY_PROVIDER_PATH, "jceks://file" + keystore.toAbsolutePath())
                .config("spark.hadoop." + SealedFileSystem.KEY_NAME, KEY)
                // Parquet 1.14 and 1.15 call hflush() when they close a file.
                .config("spark.hadoop." + SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS, "true")
                // Row groups of 512 KiB: several per file, each with its own statistics to skip by.
                .config("spark.hadoop.parquet.block.size", Integer.toString(512 << 10));
        server.s3aSettings().forEach((key, value) -> builder.config("spark.hadoop." + key, value));
        extra.forEach(builder::config);
        return builder.getOrCreate();
    }

    /** Two tasks of rows in id order (so row groups have narrow id ranges), partitioned by id % 4. */
    private static Dataset<Row> table(SparkSession spark) {
        return spark.range(0, ROWS, 1, 2)
                .selectExpr("id", "id % 4 AS part", "sha2(cast(id AS string), 256) AS text", "id * 0.25 AS amount");
    }

    /** A filter on the partition column (partition pruning) and on id (row group skipping), two columns. */
    private List<Row> filtered(String path) {
        return spark.read().parquet(path).where("part = 1 AND id BETWEEN 123000 AND 123999").select("id", "amount")
                .orderBy("id").collectAsList();
    }

    private FileSystem wrapped() throws IOException {
        return FileSystem.get(URI.create(PLAIN + "/"), spark.sparkContext().hadoopConfiguration());
    }

    /** The objects named part-* under {@code root} on plain S3A, sorted. */
    private List<String> partObjects(String root) throws IOException {
        List<String> parts = new ArrayList<>();
        RemoteIterator<LocatedFileStatus> files = wrapped().listFiles(new org.apache.hadoop.fs.Path(root), true);
        while (files.hasNext()) {
            org.apache.hadoop.fs.Path path = files.next().getPath();
            if (path.getName().startsWith("part-")) {
                parts.add(path.toString());
            }
        }
        parts.sort(null);
        return parts;
    }

    private byte[] readAll(String scheme, String path) throws IOException {
        FileSystem fs = FileSystem.get(URI.create(scheme + "/"), spark.sparkContext().hadoopConfiguration());
        try (InputStream in = fs.open(new org.apache.hadoop.fs.Path(path))) {
            return in.readAllBytes();
        }
    }

    private static KeyProvider provider() throws IOException {
        return KeyProviderFactory.get(URI.create("jceks://file" + keystore.toAbsolutePath()), new Configuration(false));
    }

    /** Opens a stored object with the key's current version, as any implementation of the format can. */
    private static byte[] open(byte[] stored) throws IOException {
        byte[] key = provider().getCurrentKey(KEY).getMaterial();
        GcmStreams streams = GcmStreams.builder().key(key).build();
        Arrays.fill(key, (byte) 0);
        try (InputStream in = streams.decrypt(new ByteArrayInputStream(stored))) {
            return in.readAllBytes();
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
