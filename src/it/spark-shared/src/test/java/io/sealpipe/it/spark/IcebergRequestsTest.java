package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.iceberg.SealedFileIO;
import io.sealpipe.it.s3.S3Server;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.hadoop.Configurable;
import org.apache.iceberg.io.DelegateFileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The S3 requests of reading a sealed Iceberg table against the same plain table (issue 46,
 * point 3): one Parquet table, partitioned and sorted, written by the same statement through
 * Iceberg's {@code S3FileIO} (plain) and through {@code SealedFileIO} over {@code S3FileIO}
 * (sealed), each in a JDBC catalog of its own on S3Proxy; then each read statement (a filter on
 * the partition and a data column with a projection; a projection of one column over the whole
 * table) counted by {@link S3Requests} (the SDK's own requests: GetObject, HeadObject and the
 * response bytes read) per warehouse prefix. Each statement is measured twice on both: first
 * through catalogs of their own, new, in which the tables are registered (their FileIOs have
 * read nothing yet, as on an executor that reads the table for the first time), then again
 * through the same FileIOs (in Spark's local mode the executors' tasks use the catalog's own
 * FileIO, which remembers the files' headers; on a cluster each scan's executors start afresh,
 * as in the first). The catalogs cache no table, so that each statement reads the table's
 * metadata alike on both sides. The target: sealed GETs at most 1.25 x plain, bytes at most
 * 1.3 x, HEADs no more, on a plain read that made requests at all; for the whole-table read of
 * row groups under 2 MiB ({@code sealpipe.it.iceberg.requests.row-group-bytes}), GETs and HEADs
 * only. The table of counts is printed and written to {@code target/iceberg-requests.txt}.
 *
 * <p>The check can fail: a {@code SealedFileIO} that ignores the lengths Iceberg keeps in its
 * manifests ({@link HeadingSealedFileIO}, a HEAD per file opened) misses it.
 *
 * <p>Not on Spark 4.0 (its pom sets {@code sealpipe.it.iceberg.requests} to false): CI's time.
 */
@DisabledIfSystemProperty(named = "sealpipe.it.iceberg.requests", matches = "false")
@ExtendWith(IcebergWarehouses.Shared.class)
class IcebergRequestsTest {
    private static final String TABLE = ".db.events";
    /** The Parquet row group size: 2 MiB, or {@code sealpipe.it.iceberg.requests.row-group-bytes} (docs/iceberg.md's other layouts). */
    private static final long ROW_GROUP_BYTES = Long.getLong("sealpipe.it.iceberg.requests.row-group-bytes", 2 << 20);

    private static IcebergWarehouses warehouses;
    private static S3Server s3;
    private static SparkSession spark;

    /**
     * A SealedFileIO that ignores the plaintext length Iceberg hands it, so that every file's
     * length is asked of S3 (a HEAD): what the check must catch. SealedFileIO is final, so this
     * one holds one and passes everything else on.
     */
    public static final class HeadingSealedFileIO implements DelegateFileIO, Configurable<Object> {
        private static final long serialVersionUID = 1L;
        private final SealedFileIO sealed = new SealedFileIO();

        @Override
        public void setConf(Object conf) {
            sealed.setConf(conf);
        }

        @Override
        public void initialize(Map<String, String> properties) {
            sealed.initialize(properties);
        }

        @Override
        public Map<String, String> properties() {
            return sealed.properties();
        }

        @Override
        public InputFile newInputFile(String path) {
            return sealed.newInputFile(path);
        }

        @Override
        public InputFile newInputFile(String path, long length) {
            return sealed.newInputFile(path);
        }

        @Override
        public OutputFile newOutputFile(String path) {
            return sealed.newOutputFile(path);
        }

        @Override
        public void deleteFile(String path) {
            sealed.deleteFile(path);
        }

        @Override
        public void deleteFiles(Iterable<String> paths) {
            sealed.deleteFiles(paths);
        }

        @Override
        public Iterable<FileInfo> listPrefix(String prefix) {
            return sealed.listPrefix(prefix);
        }

        @Override
        public void deletePrefix(String prefix) {
            sealed.deletePrefix(prefix);
        }

        @Override
        public void close() {
            sealed.close();
        }
    }

    @BeforeAll
    static void start(IcebergWarehouses shared) throws Exception {
        warehouses = shared;
        spark = shared.spark();
        s3 = shared.s3();
    }

    /** A statement's counts, plain and sealed. */
    record Measured(String statement, S3Requests.Counts plain, S3Requests.Counts sealed) {
        double gets() {
            return (double) sealed.gets() / plain.gets();
        }

        double bytes() {
            return (double) sealed.bytesRead() / plain.bytesRead();
        }

        String row() {
            return String.format("%-32s | %5d %5d %10d | %5d %5d %10d | %5.2f %5.2f", statement, plain.gets(), plain.heads(),
                    plain.bytesRead(), sealed.gets(), sealed.heads(), sealed.bytesRead(), gets(), bytes());
        }

        /** The target, or an AssertionError naming what missed it. */
        void check() {
            check(true);
        }

        /**
         * The target, its bytes too where {@code bytes}: a read of a whole table's small row groups
         * fetches whole chunks for small column chunks (docs/iceberg.md, "Requests"), which the
         * target for filtered reads does not bound.
         */
        void check(boolean bytes) {
            assertTrue(plain.gets() > 0 && plain.bytesRead() > 0, statement + ": the plain read made no GET: " + plain);
            List<String> missed = new ArrayList<>();
            if (sealed.gets() > 1.25 * plain.gets()) {
                missed.add(String.format("GETs %d > 1.25 x %d", sealed.gets(), plain.gets()));
            }
            if (bytes && sealed.bytesRead() > 1.3 * plain.bytesRead()) {
                missed.add(String.format("bytes %d > 1.3 x %d", sealed.bytesRead(), plain.bytesRead()));
            }
            if (sealed.heads() > plain.heads()) {
                missed.add(String.format("HEADs %d > %d", sealed.heads(), plain.heads()));
            }
            assertEquals(List.of(), missed, statement + ": " + row());
        }
    }

    @Test
    void aFilteredReadOfTheSealedTableMakesAboutThePlainRequests() throws Exception {
        String plainPrefix = "requests-plain/";
        String sealedPrefix = "requests-sealed/";
        warehouses.catalog("req_plain", plain("req_plain", plainPrefix));
        warehouses.catalog("req_sealed", sealed("req_sealed", sealedPrefix));
        for (String catalog : List.of("req_plain", "req_sealed")) {
            write(catalog);
        }
        assertEquals(files("req_plain"), files("req_sealed"), "the same layout: data files by partition and records");
        String plainMetadata = metadata("req_plain");
        String sealedMetadata = metadata("req_sealed");

        Map<String, String> statements = Map.of(
                "filter and projection", "SELECT id, payload FROM %s WHERE part = 1 AND id BETWEEN 150000 AND 153000 ORDER BY id",
                "projection, whole table", "SELECT sum(amount) FROM %s");
        List<Measured> table = new ArrayList<>();
        for (String statement : List.of("filter and projection", "projection, whole table")) {
            String sql = statements.get(statement);
            // Each table registered in a catalog of its own, new: its FileIO has read nothing yet
            // (as on an executor that reads the table for the first time).
            String plainCatalog = "req_plain_" + table.size();
            String sealedCatalog = "req_sealed_" + table.size();
            register(plainCatalog, plain(plainCatalog, plainPrefix), plainMetadata);
            register(sealedCatalog, sealed(sealedCatalog, sealedPrefix), sealedMetadata);
            table.add(measure(statement + ", first", sql, plainCatalog, plainPrefix, sealedCatalog, sealedPrefix));
            table.add(measure(statement + ", again", sql, plainCatalog, plainPrefix, sealedCatalog, sealedPrefix));
        }

        // The same read through a SealedFileIO that HEADs every file: the check fails.
        Map<String, String> heading = sealed("req_heading", sealedPrefix);
        heading.put("io-impl", HeadingSealedFileIO.class.getName());
        Measured broken = measure("filter, HEADing SealedFileIO", statements.get("filter and projection"),
                register("req_plain_heading", plain("req_plain_heading", plainPrefix), plainMetadata), plainPrefix,
                register("req_heading", heading, sealedMetadata), sealedPrefix);
        AssertionError missed = assertThrows(AssertionError.class, broken::check, "the check passes a SealedFileIO that HEADs");
        System.out.println("the check fails on a SealedFileIO that HEADs each file: " + missed.getMessage());

        List<String> lines = new ArrayList<>();
        lines.add(String.format("%-32s | %-22s | %-22s | %s", "statement", "plain GET HEAD bytes", "sealed GET HEAD bytes",
                "GETs bytes (sealed/plain)"));
        for (Measured m : table) {
            lines.add(m.row());
        }
        lines.add(broken.row() + "   (a broken SealedFileIO: must miss)");
        String report = String.join("\n", lines);
        System.out.println(report);
        Files.writeString(IcebergWarehouses.TARGET.resolve("iceberg-requests.txt"), report + "\n");
        for (Measured m : table) {
            m.check(m.statement().startsWith("filter") || ROW_GROUP_BYTES >= 2 << 20);
        }
    }

    /** A JDBC catalog {@code name}'s settings on plain S3FileIO, its warehouse under {@code prefix}, no table cache. */
    private static Map<String, String> plain(String name, String prefix) throws Exception {
        Map<String, String> settings = warehouses.s3FileIO(IcebergWarehouses.jdbc(name, "s3://" + S3Server.BUCKET + "/" + prefix));
        // Every statement loads the table (its metadata.json and manifest list) again, on both
        // sides alike: no cache entry of Spark's CachingCatalog that expires on one side only.
        settings.put("cache-enabled", "false");
        return settings;
    }

    /** {@link #plain}, through SealedFileIO. */
    private static Map<String, String> sealed(String name, String prefix) throws Exception {
        return warehouses.sealedFileIO(plain(name, prefix));
    }

    private static String metadata(String catalog) throws Exception {
        return ((org.apache.iceberg.HasTableOperations) org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark,
                catalog + TABLE)).operations().current().metadataFileLocation();
    }

    /**
     * Adds catalog {@code name} of {@code settings} and registers the table of {@code metadata}
     * in it (a JDBC catalog's tables are its name's); returns its name.
     */
    private static String register(String name, Map<String, String> settings, String metadata) {
        warehouses.catalog(name, settings);
        spark.sql("CREATE NAMESPACE IF NOT EXISTS " + name + ".db");
        spark.sql("CALL " + name + ".system.register_table(table => 'db.events', metadata_file => '" + metadata + "')");
        return name;
    }

    /**
     * Runs {@code sql} on each catalog after a reset of the counts: the same rows, and each
     * one's requests under its prefix. Each sealed GET's range is printed when the sealed read
     * makes more GETs.
     */
    private static Measured measure(String statement, String sql, String plainCatalog, String plainPrefix,
            String sealedCatalog, String sealedPrefix) {
        String plainSql = String.format(sql, plainCatalog + TABLE);
        String sealedSql = String.format(sql, sealedCatalog + TABLE);
        S3Requests.reset();
        List<String> plainRows = render(plainSql);
        S3Requests.Counts plain = S3Requests.counts(S3Server.BUCKET, plainPrefix);
        List<S3Requests.Request> plainRequests = S3Requests.requests(S3Server.BUCKET, plainPrefix);
        S3Requests.reset();
        List<String> sealedRows = render(sealedSql);
        S3Requests.Counts sealed = S3Requests.counts(S3Server.BUCKET, sealedPrefix);
        List<S3Requests.Request> sealedRequests = S3Requests.requests(S3Server.BUCKET, sealedPrefix);
        assertEquals(plainRows, sealedRows, statement + ": rows");
        assertTrue(!plainRows.isEmpty(), statement + ": no rows");
        if (sealed.gets() > plain.gets() || sealed.heads() > plain.heads()) {
            System.out.println(statement + ", plain requests:");
            plainRequests.forEach(r -> System.out.println("  " + r));
            System.out.println(statement + ", sealed requests:");
            sealedRequests.forEach(r -> System.out.println("  " + r));
        }
        return new Measured(statement, plain, sealed);
    }

    /**
     * The table: Parquet, three partitions, one file each (hashed by partition: the same layout
     * every time), sorted by {@code id} within it (so that row groups can be
     * skipped by their statistics), row groups of 2 MiB, with columns of hashes and hex digests that
     * do not compress away: about 9 MB a file, over the 1 MiB up to which Iceberg 1.12's
     * Parquet reader fetches a file whole ({@code EagerInputFile}), so that reads are ranges.
     * One split a file: Iceberg's adaptive split size would make a task of each row group for
     * Spark's two local cores, and each task reads the file's footer again.
     */
    private static void write(String catalog) {
        String t = catalog + TABLE;
        spark.sql("CREATE NAMESPACE IF NOT EXISTS " + catalog + ".db");
        spark.sql("CREATE TABLE " + t + " (id BIGINT, part INT, amount DOUBLE, payload STRING) USING iceberg"
                + " PARTITIONED BY (part) TBLPROPERTIES ('format-version' = '2', 'write.format.default' = 'parquet',"
                + " 'write.parquet.row-group-size-bytes' = '" + ROW_GROUP_BYTES + "', 'read.split.adaptive-size.enabled' = 'false')");
        spark.sql("ALTER TABLE " + t + " WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY id");
        spark.sql("INSERT INTO " + t + " SELECT id, CAST(id % 3 AS INT), CAST(hash(id) AS DOUBLE), sha2(CAST(id AS STRING), 256)"
                + " FROM range(0, 600000)");
    }

    private static List<String> files(String catalog) {
        return render("SELECT partition.part, record_count FROM " + catalog + TABLE + ".files ORDER BY 1, 2");
    }

    private static List<String> render(String query) {
        return spark.sql(query).collectAsList().stream().map(Object::toString).toList();
    }
}
