package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.it.s3.S3Server;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

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
 *   <li>{@link IcebergScript} gives the plain warehouse's results ({@link IcebergWarehouses#plain}),
 *       {@code remove_orphan_files} listing through the FileIO ({@code prefix_listing}:
 *       {@code SealedFileIO.listPrefix} over S3FileIO's), and every object stored under the
 *       sealed warehouse is a sealed file ({@link IcebergSealedTablesTest#checkSealed}, through
 *       the sealed file system over S3A: the same stored format); no multipart upload is left
 *       pending.
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
 * The session and S3Proxy are {@link IcebergWarehouses}', shared with the other Iceberg classes.
 */
@ExtendWith(IcebergWarehouses.Shared.class)
class IcebergSealedFileIOTest {
    private static final List<String> FORMATS = Arrays.asList(
            System.getProperty("sealpipe.it.iceberg.fileio.formats", "parquet,orc").split(","));

    private static IcebergWarehouses warehouses;
    private static SparkSession spark;
    private static S3Server s3;

    @BeforeAll
    static void start(IcebergWarehouses shared) throws Exception {
        warehouses = shared;
        spark = shared.spark();
        s3 = shared.s3();
    }

    @Test
    void theScriptThroughSealedFileIOOverS3FileIOGivesThePlainResultsAndStoresOnlySealedObjects() throws Exception {
        warehouses.catalog("fileio_sealed", warehouses.sealedFileIO(warehouses.s3FileIO(
                IcebergWarehouses.jdbc("fileio_sealed", "s3://" + S3Server.BUCKET + "/fileio-sealed"))));
        for (String format : FORMATS) {
            warehouses.runSealed("fileio_sealed", format, true);
        }
        assertTrue(Spark3Util.loadIcebergTable(spark, "fileio_sealed.db.t_" + FORMATS.get(0)).io().toString()
                .contains("S3FileIO"), "the sealed catalog's FileIO wraps S3FileIO");

        IcebergSealedTablesTest.checkSealed(spark.sparkContext().hadoopConfiguration(),
                "ss3a://" + S3Server.BUCKET + "/fileio-sealed", "s3a://" + S3Server.BUCKET + "/fileio-sealed", Map.of(),
                FORMATS);
        assertEquals(List.of(), s3.pendingUploads("fileio-sealed/"), "pending uploads");
    }

    /**
     * SealedFileIO's default FileIO, Iceberg's {@code ResolvingFileIO} (a REST catalog's default
     * too): the catalog names no {@code sealpipe.io-impl}, and ResolvingFileIO hands the
     * {@code s3://} warehouse to S3FileIO with the catalog's {@code s3.*} properties. The script
     * in Parquet gives the plain results, and every stored object is sealed once.
     */
    @Test
    @DisabledIfSystemProperty(named = "sealpipe.it.iceberg.fileio.interop", matches = "false")
    void theScriptThroughSealedFileIOOverResolvingFileIOGivesThePlainResults() throws Exception {
        Map<String, String> settings = warehouses.sealedFileIO(warehouses.s3FileIO(
                IcebergWarehouses.jdbc("resolving", "s3://" + S3Server.BUCKET + "/resolving")));
        settings.remove("sealpipe.io-impl");
        warehouses.catalog("resolving", settings);
        warehouses.runSealed("resolving", "parquet", true);
        String io = Spark3Util.loadIcebergTable(spark, "resolving.db.t_parquet").io().toString();
        assertTrue(io.contains("ResolvingFileIO"), "the catalog's FileIO wraps ResolvingFileIO: " + io);
        IcebergSealedTablesTest.checkSealed(spark.sparkContext().hadoopConfiguration(),
                "ss3a://" + S3Server.BUCKET + "/resolving", "s3a://" + S3Server.BUCKET + "/resolving", Map.of(),
                List.of("parquet"));
        assertEquals(List.of(), s3.pendingUploads("resolving/"), "pending uploads");
    }

    @Test
    @DisabledIfSystemProperty(named = "sealpipe.it.iceberg.fileio.interop", matches = "false")
    void tablesCrossBetweenTheSealedFileSystemAndSealedFileIO() throws Exception {
        String warehouse = "ss3a://" + S3Server.BUCKET + "/interop";
        // Written through HadoopFileIO over ss3a, read through SealedFileIO(S3FileIO): the same
        // ss3a:// locations, registered in a catalog of its own from the table's metadata.json.
        warehouses.catalog("interop_fs", IcebergWarehouses.jdbc("interop_fs", warehouse));
        warehouses.catalog("interop_fileio", warehouses.sealedFileIO(warehouses.s3FileIO(
                IcebergWarehouses.jdbc("interop_fileio", warehouse))));
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

}
