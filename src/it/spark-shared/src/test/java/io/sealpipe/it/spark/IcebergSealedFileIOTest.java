package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FileSystem;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;

/**
 * Iceberg tables through {@code io.sealpipe.iceberg.SealedFileIO} over Iceberg's own
 * {@code S3FileIO} against S3Proxy ({@link S3Server}), with no Hadoop file system in the data
 * path (issue 46, point 2): the JDBC catalog on a SQLite file under {@code target/}, its
 * {@code io-impl} SealedFileIO, {@code sealpipe.io-impl} S3FileIO, S3FileIO's own properties
 * ({@code s3.endpoint}, {@code s3.path-style-access}, the credentials, {@code client.region}) and
 * the sealed file system's key settings (direct keys from a JCEKS keystore), its warehouse
 * {@code s3://}.
 *
 * <ul>
 *   <li>{@link IcebergScript} gives the results of the same script through plain
 *       {@code S3FileIO} on another prefix, {@code remove_orphan_files} listing through the
 *       FileIO ({@code prefix_listing}: {@code SealedFileIO.listPrefix} over S3FileIO's), and
 *       every object stored under the sealed warehouse is a sealed file
 *       ({@link IcebergSealedTablesTest#checkSealed}, through the sealed file system over S3A:
 *       the same stored format); no multipart upload is left pending.
 *   <li>Interoperability: a table written through {@code HadoopFileIO} over {@code ss3a://}
 *       (the sealed file system over S3A) reads through SealedFileIO(S3FileIO), whose
 *       {@code S3URI} takes {@code ss3a://bucket/key} as the object {@code bucket/key}; and a
 *       table written through SealedFileIO(S3FileIO) at an {@code ss3a://} location reads
 *       through HadoopFileIO over {@code ss3a://}: the same rows each way.
 * </ul>
 *
 * <p>The formats of the script are {@code sealpipe.it.iceberg.fileio.formats} (Parquet and ORC;
 * Spark 4.0's pom keeps Parquet alone, on hadoop-aws's SDK bundle: CI's time), and the
 * interoperability test is not run where {@code sealpipe.it.iceberg.fileio.interop} is false.
 */
class IcebergSealedFileIOTest {
    private static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target"));
    private static final Path DIR = TARGET.resolve("iceberg-fileio");
    private static final String KEY = "data";
    private static final List<String> FORMATS = Arrays.asList(
            System.getProperty("sealpipe.it.iceberg.fileio.formats", "parquet,orc").split(","));

    private static S3Server s3;
    private static SparkSession spark;
    private static Path keystore;

    /**
     * S3Proxy does not take the SDK v2's default checksums since 2.30 (an {@code aws-chunked}
     * body with a trailing CRC): checksums only where S3 requires them, as S3A's own settings
     * for third-party stores do. JVM-wide: Spark's local mode makes every S3 client here.
     */
    static void checksumsOnlyWhereRequired() {
        System.setProperty("aws.requestChecksumCalculation", "WHEN_REQUIRED");
        System.setProperty("aws.responseChecksumValidation", "WHEN_REQUIRED");
    }

    @BeforeAll
    static void start() throws Exception {
        checksumsOnlyWhereRequired();
        EncryptionJob.deleteTree(DIR);
        Files.createDirectories(DIR);
        keystore = DIR.resolve("keys.jceks");
        KeyProvider provider = KeyProviderFactory.get(URI.create("jceks://file" + keystore.toAbsolutePath()),
                new Configuration(false));
        provider.createKey(KEY, new KeyProvider.Options(new Configuration(false)).setBitLength(256));
        provider.flush();
        s3 = S3Server.start();
        SparkSession.Builder builder = SparkSession.builder()
                .master("local[2]")
                .appName("iceberg-fileio")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
                // The sealed file system over S3A: to check the stored objects, and the other
                // side of the interoperability test.
                .config("spark.hadoop.fs.ss3a.impl", SealedFileSystem.class.getName())
                .config("spark.hadoop." + SealedFileSystem.wrapsKey("ss3a"), "s3a")
                .config("spark.hadoop." + SealedFileSystem.KEY_PROVIDER_PATH, "jceks://file" + keystore.toAbsolutePath())
                .config("spark.hadoop." + SealedFileSystem.KEY_NAME, KEY);
        s3.s3aSettings().forEach((key, value) -> builder.config("spark.hadoop." + key, value));
        spark = builder.getOrCreate();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (spark != null) {
                spark.stop();
            }
            FileSystem.closeAll();
        } finally {
            if (s3 != null) {
                s3.close();
            }
        }
    }

    @Test
    void theScriptThroughSealedFileIOOverS3FileIOGivesThePlainResultsAndStoresOnlySealedObjects() throws Exception {
        catalog("fileio_plain", s3FileIO(jdbc("fileio_plain", "s3://" + S3Server.BUCKET + "/fileio-plain")));
        catalog("fileio_sealed", sealed(s3FileIO(jdbc("fileio_sealed", "s3://" + S3Server.BUCKET + "/fileio-sealed"))));
        for (String format : FORMATS) {
            String table = "t_" + format;
            long start = System.nanoTime();
            List<IcebergScript.Result> plain = IcebergScript.run(spark, "fileio_plain", table, format, true);
            System.out.printf("fileio_plain, %s: %d statements in %.1f s%n", format, plain.size(), (System.nanoTime() - start) / 1e9);
            assertEquals(List.of("orphan-0." + format), find(plain, "remove_orphan_files").rows(), format);
            start = System.nanoTime();
            List<IcebergScript.Result> sealed = IcebergScript.run(spark, "fileio_sealed", table, format, true);
            assertEquals(plain.size(), sealed.size(), "statements");
            for (int i = 0; i < plain.size(); i++) {
                assertEquals(plain.get(i), sealed.get(i), "fileio_sealed, " + format + ", statement " + i);
            }
            System.out.printf("fileio_sealed, %s: %d statements in %.1f s, the same results as fileio_plain%n", format,
                    sealed.size(), (System.nanoTime() - start) / 1e9);
        }
        assertTrue(Spark3Util.loadIcebergTable(spark, "fileio_sealed.db.t_" + FORMATS.get(0)).io().toString()
                .contains("S3FileIO"), "the sealed catalog's FileIO wraps S3FileIO");

        IcebergSealedTablesTest.checkSealed(spark.sparkContext().hadoopConfiguration(),
                "ss3a://" + S3Server.BUCKET + "/fileio-sealed", "s3a://" + S3Server.BUCKET + "/fileio-sealed", Map.of(),
                FORMATS);
        assertEquals(List.of(), s3.pendingUploads(""), "pending uploads");
    }

    @Test
    @DisabledIfSystemProperty(named = "sealpipe.it.iceberg.fileio.interop", matches = "false")
    void tablesCrossBetweenTheSealedFileSystemAndSealedFileIO() throws Exception {
        String warehouse = "ss3a://" + S3Server.BUCKET + "/interop";
        // Written through HadoopFileIO over ss3a, read through SealedFileIO(S3FileIO): the same
        // ss3a:// locations, registered in a catalog of its own from the table's metadata.json.
        catalog("interop_fs", jdbc("interop_fs", warehouse));
        catalog("interop_fileio", sealed(s3FileIO(jdbc("interop_fileio", warehouse))));
        spark.sql("CREATE NAMESPACE IF NOT EXISTS interop_fs.db");
        spark.sql("CREATE NAMESPACE IF NOT EXISTS interop_fileio.db");
        String rows = "SELECT id, CAST(id % 3 AS INT) AS part, concat('n', id) AS name FROM range(0, 500)";
        String properties = "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')";
        spark.sql("CREATE TABLE interop_fs.db.from_fs (id BIGINT, part INT, name STRING) USING iceberg PARTITIONED BY (part) "
                + properties);
        spark.sql("INSERT INTO interop_fs.db.from_fs " + rows);
        spark.sql("DELETE FROM interop_fs.db.from_fs WHERE id % 7 = 0");
        String query = " WHERE part = 1 AND id > 100 ORDER BY id";
        List<String> written = render("SELECT * FROM interop_fs.db.from_fs" + query);
        Table fromFs = Spark3Util.loadIcebergTable(spark, "interop_fs.db.from_fs");
        String metadata = ((org.apache.iceberg.HasTableOperations) fromFs).operations().current().metadataFileLocation();
        assertTrue(metadata.startsWith("ss3a://"), metadata);
        spark.sql("CALL interop_fileio.system.register_table(table => 'db.from_fs', metadata_file => '" + metadata + "')");
        assertEquals(written, render("SELECT * FROM interop_fileio.db.from_fs" + query),
                "a table written through HadoopFileIO over ss3a, read through SealedFileIO(S3FileIO)");
        assertTrue(written.size() > 50, "rows: " + written.size());

        // Written through SealedFileIO(S3FileIO) at an ss3a:// location, read through HadoopFileIO over ss3a.
        spark.sql("CREATE TABLE interop_fileio.db.from_fileio (id BIGINT, part INT, name STRING) USING iceberg"
                + " PARTITIONED BY (part) LOCATION '" + warehouse + "/from_fileio' " + properties);
        spark.sql("INSERT INTO interop_fileio.db.from_fileio " + rows);
        spark.sql("DELETE FROM interop_fileio.db.from_fileio WHERE id % 7 = 0");
        List<String> writtenByFileIO = render("SELECT * FROM interop_fileio.db.from_fileio" + query);
        assertEquals(written, writtenByFileIO, "the same statements through SealedFileIO(S3FileIO)");
        Table fromFileIO = Spark3Util.loadIcebergTable(spark, "interop_fileio.db.from_fileio");
        String metadata2 = ((org.apache.iceberg.HasTableOperations) fromFileIO).operations().current().metadataFileLocation();
        spark.sql("CALL interop_fs.system.register_table(table => 'db.from_fileio', metadata_file => '" + metadata2 + "')");
        assertEquals(written, render("SELECT * FROM interop_fs.db.from_fileio" + query),
                "a table written through SealedFileIO(S3FileIO), read through HadoopFileIO over ss3a");
    }

    private static List<String> render(String query) {
        return spark.sql(query).collectAsList().stream().map(Object::toString).toList();
    }

    private static IcebergScript.Result find(List<IcebergScript.Result> results, String prefix) {
        return results.stream().filter(r -> r.statement().startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no result " + prefix + " in " + results));
    }

    /** The JDBC catalog's settings: its own SQLite file under target/, its warehouse, HadoopFileIO. */
    static Map<String, String> jdbc(Path dir, String name, String warehouse) {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("type", "jdbc");
        settings.put("uri", "jdbc:sqlite:" + dir.resolve(name + "-catalog.db").toAbsolutePath());
        settings.put("jdbc.schema-version", "V1");
        settings.put("warehouse", warehouse);
        settings.put("io-impl", "org.apache.iceberg.hadoop.HadoopFileIO");
        return settings;
    }

    private static Map<String, String> jdbc(String name, String warehouse) {
        return jdbc(DIR, name, warehouse);
    }

    /** {@code settings} with Iceberg's S3FileIO as the catalog's FileIO, on S3Proxy. */
    static Map<String, String> s3FileIO(S3Server s3, Map<String, String> settings) {
        Map<String, String> s3a = s3.s3aSettings();
        settings.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
        settings.put("s3.endpoint", s3.endpoint());
        settings.put("s3.path-style-access", "true");
        settings.put("s3.access-key-id", s3a.get("fs.s3a.access.key"));
        settings.put("s3.secret-access-key", s3a.get("fs.s3a.secret.key"));
        settings.put("client.region", "us-east-1");
        return settings;
    }

    private static Map<String, String> s3FileIO(Map<String, String> settings) {
        return s3FileIO(s3, settings);
    }

    /** {@code settings} (a catalog's on some FileIO) with that FileIO wrapped by SealedFileIO, direct keys from {@code keystore}. */
    static Map<String, String> sealed(Path keystore, Map<String, String> settings) {
        settings.put("sealpipe.io-impl", settings.get("io-impl"));
        settings.put("io-impl", "io.sealpipe.iceberg.SealedFileIO");
        settings.put(SealedFileSystem.KEY_PROVIDER_PATH, "jceks://file" + keystore.toAbsolutePath());
        settings.put(SealedFileSystem.KEY_NAME, KEY);
        return settings;
    }

    private static Map<String, String> sealed(Map<String, String> settings) {
        return sealed(keystore, settings);
    }

    private static void catalog(String name, Map<String, String> settings) {
        String prefix = "spark.sql.catalog." + name;
        spark.conf().set(prefix, "org.apache.iceberg.spark.SparkCatalog");
        settings.forEach((key, value) -> spark.conf().set(prefix + "." + key, value));
    }
}
