package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.junit.jupiter.api.function.Executable;

/**
 * Iceberg tables on sealed storage through Hadoop's file system (issue 46, point 1): Iceberg's
 * Spark runtime with its {@code HadoopFileIO} on {@code SealedFileSystem}, the same
 * {@link IcebergScript} (a partitioned table; inserts, {@code MERGE INTO}, {@code UPDATE} and
 * {@code DELETE} copy-on-write and merge-on-read; filtered and projected reads; time travel;
 * {@code rewrite_data_files}, {@code expire_snapshots}, {@code remove_orphan_files},
 * {@code compute_table_stats}; the {@code .files} and {@code .snapshots} tables), for a Parquet
 * and an ORC table, on a plain warehouse and on a sealed one, with the same results:
 *
 * <ul>
 *   <li>the Hadoop catalog on HDFS: {@code shdfs://} (sealed over {@code hdfs}) against
 *       {@code hdfs://}, one MiniDFSCluster of Hadoop 3.4.1 in a JVM of its own ({@link Hdfs}),
 *       with direct keys and, in a catalog of its own, envelope keys (whose orphan files are
 *       listed through {@code HadoopFileIO}'s {@code listPrefix}; not on Spark 4.0, whose pom
 *       sets {@code sealpipe.it.iceberg.envelope} to false: CI's time);
 *   <li>the JDBC catalog on a SQLite file under {@code target/}, its tables on S3:
 *       {@code ss3a://} (sealed over S3A) against {@code s3a://}, S3Proxy on 127.0.0.1
 *       ({@link S3Server}); not on Spark 4.0, whose pom sets {@code sealpipe.it.iceberg.s3} to
 *       false (CI's time).
 * </ul>
 *
 * <p>Then every object stored under each sealed warehouse, read raw through the wrapped file
 * system ({@code hdfs://}, {@code s3a://}), is a sealed file that no table format's reader takes
 * for its own (no {@code PAR1}, {@code ORC}, Avro's {@code Obj} and byte 1, {@code PFA1} or
 * {@code {"format-version"...}} at its start, nor the first bytes of its own plaintext), of
 * exactly the stored length a sealed file of its plaintext has (with an envelope first, in
 * envelope mode), which decrypts whole through the sealed file system to a file of its kind:
 * data files and position delete files (Parquet and ORC), manifests and manifest lists (Avro),
 * {@code metadata.json}, the statistics file (Puffin), {@code version-hint.text}; each kind found
 * at least once. The same check on the plain warehouse fails.
 *
 * <p>Direct keys, one 256-bit key in a JCEKS keystore; on HDFS also envelope keys (data keys
 * wrapped by that key through Hadoop's {@code KeyProviderCryptoExtension}, locally: no KMS
 * server). One SparkSession (the catalogs are added to it as each test needs them), one
 * MiniDFSCluster and one S3Proxy for the class.
 */
class IcebergSealedTablesTest {
    private static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target"));
    private static final Path DIR = TARGET.resolve("iceberg-sealed");
    private static final String KEY = "data";
    private static final List<String> FORMATS = List.of("parquet", "orc");
    /**
     * The catalogs whose remove_orphan_files lists through the table's FileIO (HadoopFileIO's
     * listPrefix, the way a FileIO of its own such as S3FileIO needs), not Hadoop's FileSystem.
     */
    private static final Set<String> PREFIX_LISTING = Set.of("hdfs_envelope");

    private static Hdfs hdfs;
    private static S3Server s3;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws Exception {
        EncryptionJob.deleteTree(DIR);
        Files.createDirectories(DIR);
        Path keystore = DIR.resolve("keys.jceks");
        KeyProvider provider = KeyProviderFactory.get(URI.create("jceks://file" + keystore.toAbsolutePath()),
                new Configuration(false));
        provider.createKey(KEY, new KeyProvider.Options(new Configuration(false)).setBitLength(256));
        provider.flush();
        hdfs = Hdfs.start(DIR.resolve("hdfs"));
        s3 = S3Server.start();
        SparkSession.Builder builder = SparkSession.builder()
                .master("local[2]")
                .appName("iceberg-sealed")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
                .config("spark.hadoop.fs.shdfs.impl", SealedFileSystem.class.getName())
                .config("spark.hadoop." + SealedFileSystem.wrapsKey("shdfs"), "hdfs")
                .config("spark.hadoop.fs.ss3a.impl", SealedFileSystem.class.getName())
                .config("spark.hadoop." + SealedFileSystem.wrapsKey("ss3a"), "s3a")
                .config("spark.hadoop." + SealedFileSystem.KEY_PROVIDER_PATH, "jceks://file" + keystore.toAbsolutePath())
                .config("spark.hadoop." + SealedFileSystem.KEY_NAME, KEY)
                // HDFS's client asks again after 10 ms, not 400, whether a file it closes is
                // complete (as hadoop-3.4's MiniHdfs: on one host the DataNode's report comes
                // within milliseconds).
                .config("spark.hadoop.dfs.client.block.write.locateFollowingBlock.initial.delay.ms", "10")
                .config("spark.hadoop.dfs.client.block.write.locateFollowingBlock.retries", "12");
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
            try {
                if (s3 != null) {
                    s3.close();
                }
            } finally {
                if (hdfs != null) {
                    hdfs.close();
                }
            }
        }
    }

    @Test
    void theHadoopCatalogOnShdfsGivesThePlainResultsAndStoresOnlySealedFiles() throws Exception {
        int port = hdfs.uri().getPort();
        String plain = "hdfs://localhost:" + port + "/plain-warehouse";
        String sealed = "shdfs://localhost:" + port + "/sealed-warehouse";
        // Envelope keys (a data key per file, wrapped by the keystore's key through Hadoop's
        // KeyProviderCryptoExtension, in the file's first 512 bytes) in a catalog of its own
        // whose Hadoop settings say so. Hadoop caches a file system by scheme and authority, not
        // by settings: the same NameNode named 127.0.0.1 is a file system of its own, made first
        // by this catalog's FileIO with its settings (and then found in the cache by Spark's own
        // listings, such as remove_orphan_files').
        String envelope = "shdfs://127.0.0.1:" + port + "/envelope-warehouse";
        catalog("hdfs_plain", Map.of("type", "hadoop", "warehouse", plain));
        catalog("hdfs_sealed", Map.of("type", "hadoop", "warehouse", sealed));
        boolean envelopes = !"false".equals(System.getProperty("sealpipe.it.iceberg.envelope"));
        if (envelopes) {
            catalog("hdfs_envelope", Map.of("type", "hadoop", "warehouse", envelope,
                    "hadoop." + SealedFileSystem.KEY_MODE, "envelope"));
            compare("hdfs_plain", "hdfs_sealed", "hdfs_envelope");
        } else {
            compare("hdfs_plain", "hdfs_sealed");
        }

        Map<String, Integer> kinds = checkSealed(sealed, "hdfs://localhost:" + port + "/sealed-warehouse", Map.of());
        assertTrue(kinds.getOrDefault("version-hint", 0) > 0, "version-hint.text files checked: " + kinds);
        if (envelopes) {
            checkSealed(envelope, "hdfs://localhost:" + port + "/envelope-warehouse", Map.of(SealedFileSystem.KEY_MODE, "envelope"));
        }
        failsOnThePlainWarehouse(() -> checkSealed("shdfs://localhost:" + port + "/plain-warehouse", plain, Map.of()));
    }

    /** Not on Spark 4.0 (its pom sets the property), for CI's time: HDFS with direct keys is the path both projects run. */
    @Test
    @DisabledIfSystemProperty(named = "sealpipe.it.iceberg.s3", matches = "false")
    void theJdbcCatalogOnSs3aGivesThePlainResultsAndStoresOnlySealedObjects() throws Exception {
        String plain = "s3a://" + S3Server.BUCKET + "/plain-warehouse";
        String sealed = "ss3a://" + S3Server.BUCKET + "/sealed-warehouse";
        catalog("s3_plain", jdbc("s3_plain", plain));
        catalog("s3_sealed", jdbc("s3_sealed", sealed));
        compare("s3_plain", "s3_sealed");

        checkSealed(sealed, "s3a://" + S3Server.BUCKET + "/sealed-warehouse", Map.of());
        assertEquals(List.of(), s3.pendingUploads(""), "pending uploads");
        failsOnThePlainWarehouse(() -> checkSealed("ss3a://" + S3Server.BUCKET + "/plain-warehouse", plain, Map.of()));
    }

    /** The check of the stored files fails on the plain warehouse: it can fail. */
    private static void failsOnThePlainWarehouse(Executable check) {
        AssertionError failure = assertThrows(AssertionError.class, check, "the check passes on the plain warehouse");
        String message = String.valueOf(failure.getMessage());
        System.out.println("the check on the plain warehouse fails: "
                + (message.length() > 400 ? message.substring(0, 400) + "..." : message));
    }

    /** The JDBC catalog's settings: its own SQLite file under target/, its warehouse. */
    private static Map<String, String> jdbc(String name, String warehouse) {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("type", "jdbc");
        settings.put("uri", "jdbc:sqlite:" + DIR.resolve(name + "-catalog.db").toAbsolutePath());
        settings.put("jdbc.schema-version", "V1");
        settings.put("warehouse", warehouse);
        return settings;
    }

    /**
     * Adds Iceberg catalog {@code name} to the session, on Iceberg's {@code HadoopFileIO} unless
     * {@code settings} name another {@code io-impl}: a run through {@code SealedFileIO} is one
     * more catalog, its {@code io-impl} and its delegate's properties in {@code settings}, given
     * to {@link #compare} beside the others, and its warehouse checked by {@link #checkSealed}
     * through the sealed file system (the same stored format).
     */
    private static void catalog(String name, Map<String, String> settings) {
        String prefix = "spark.sql.catalog." + name;
        spark.conf().set(prefix, "org.apache.iceberg.spark.SparkCatalog");
        spark.conf().set(prefix + ".io-impl", "org.apache.iceberg.hadoop.HadoopFileIO");
        settings.forEach((key, value) -> spark.conf().set(prefix + "." + key, value));
    }

    /** Runs the script for each format on each catalog: the sealed ones give the plain one's results, statement by statement. */
    private static void compare(String plainCatalog, String... sealedCatalogs) throws IOException {
        for (String format : FORMATS) {
            String table = "t_" + format;
            long start = System.nanoTime();
            List<IcebergScript.Result> plain = IcebergScript.run(spark, plainCatalog, table, format, false);
            System.out.printf("%s, %s: %d statements in %.1f s%n", plainCatalog, format, plain.size(), (System.nanoTime() - start) / 1e9);
            // The script did what it is for: delete files, one orphan removed, a statistics file.
            String files = find(plain, ".files").rows().toString();
            assertTrue(files.contains("[1," + format.toUpperCase()), format + ": no position delete files in " + files);
            assertEquals(List.of("orphan-0." + format), find(plain, "remove_orphan_files").rows(), format);
            assertEquals(List.of("[1]"), find(plain, "snapshots after expire_snapshots").rows(), format);
            assertEquals(List.of("1"), find(plain, "compute_table_stats").rows(), format);
            for (String sealedCatalog : sealedCatalogs) {
                start = System.nanoTime();
                List<IcebergScript.Result> sealed = IcebergScript.run(spark, sealedCatalog, table, format,
                        PREFIX_LISTING.contains(sealedCatalog));
                assertEquals(plain.size(), sealed.size(), "statements");
                for (int i = 0; i < plain.size(); i++) {
                    assertEquals(plain.get(i), sealed.get(i), sealedCatalog + ", " + format + ", statement " + i);
                }
                System.out.printf("%s, %s: %d statements in %.1f s, the same results as %s%n", sealedCatalog, format,
                        sealed.size(), (System.nanoTime() - start) / 1e9, plainCatalog);
            }
        }
    }

    private static IcebergScript.Result find(List<IcebergScript.Result> results, String prefix) {
        return results.stream().filter(r -> r.statement().startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no result " + prefix + " in " + results));
    }

    /** An envelope file's first bytes and the envelope's length, before the sealed message (docs/FORMAT.md). */
    private static final byte[] ENVELOPE_MAGIC = {(byte) 0x89, 'S', 'P', 'E', 'N', 'V', '\r', '\n'};
    private static final int ENVELOPE_LENGTH = 512;

    /** The magic numbers a file of each kind starts with, as stored by a plain warehouse. */
    private static final Map<String, byte[]> MAGIC = Map.of(
            "parquet", "PAR1".getBytes(StandardCharsets.US_ASCII),
            "orc", "ORC".getBytes(StandardCharsets.US_ASCII),
            "avro", new byte[] {'O', 'b', 'j', 1},
            // Not "{" alone: one sealed file in 256 starts with that byte (its salt is random).
            "json", "{\"format-version\"".getBytes(StandardCharsets.US_ASCII),
            "puffin", "PFA1".getBytes(StandardCharsets.US_ASCII));

    /**
     * Reads every file stored under {@code raw} (the sealed warehouse through the file system it
     * wraps) and checks that none starts as a Parquet, ORC, Avro, Puffin or JSON file, that each
     * is as long as a sealed file of its plaintext, and that each read whole through the sealed
     * file system ({@code sealed}, the same directory, an instance of its own with the session's
     * settings and {@code settings}) is a file of its kind. Returns the count of
     * files by kind, and fails unless data files and delete files of both formats, manifests,
     * manifest lists, metadata.json files and statistics files were each found.
     */
    private static Map<String, Integer> checkSealed(String sealed, String raw, Map<String, String> settings) throws IOException {
        return checkSealed(spark.sparkContext().hadoopConfiguration(), sealed, raw, settings, FORMATS);
    }

    /**
     * {@link #checkSealed(String, String, Map)} with the Hadoop settings {@code session} (a
     * session's, with the sealed scheme's), expecting data and delete files of {@code formats}:
     * also for the warehouses of {@code SealedFileIO} ({@link IcebergSealedFileIOTest}), the same
     * stored format.
     */
    static Map<String, Integer> checkSealed(Configuration session, String sealed, String raw, Map<String, String> settings,
            List<String> formats) throws IOException {
        FileSystem rawFs = FileSystem.get(URI.create(raw), session);
        Configuration conf = new Configuration(session);
        settings.forEach(conf::set);
        boolean envelope = "envelope".equals(conf.get(SealedFileSystem.KEY_MODE));
        try (FileSystem sealedFs = FileSystem.newInstance(URI.create(sealed), conf)) {
            return checkSealed(sealedFs, sealed, rawFs, raw, envelope, formats);
        }
    }

    private static Map<String, Integer> checkSealed(FileSystem sealedFs, String sealed, FileSystem rawFs, String raw,
            boolean envelope, List<String> formats) throws IOException {
        Map<String, Integer> kinds = new TreeMap<>();
        // Every file's problems, so that one run shows them all.
        List<String> problems = new ArrayList<>();
        RemoteIterator<LocatedFileStatus> files = rawFs.listFiles(new org.apache.hadoop.fs.Path(raw), true);
        while (files.hasNext()) {
            LocatedFileStatus file = files.next();
            String path = file.getPath().toString();
            String kind = kind(path, file.getPath().getName());
            kinds.merge(kind, 1, Integer::sum);
            byte[] stored;
            try (InputStream in = rawFs.open(file.getPath())) {
                stored = in.readAllBytes();
            }
            for (Map.Entry<String, byte[]> magic : MAGIC.entrySet()) {
                if (startsWith(stored, magic.getValue())) {
                    problems.add(path + " (" + kind + ", " + stored.length + " bytes) is stored in the clear: it starts as "
                            + magic.getKey());
                }
            }
            org.apache.hadoop.fs.Path sealedPath = new org.apache.hadoop.fs.Path(sealed + path.substring(raw.length()));
            byte[] plain;
            try (InputStream in = sealedFs.open(sealedPath)) {
                plain = in.readAllBytes();
            } catch (IOException e) {
                problems.add(sealedPath + " (" + kind + ") does not read whole as a sealed file: " + e);
                continue;
            }
            if (envelope && !startsWith(stored, ENVELOPE_MAGIC)) {
                problems.add(path + " (" + kind + ") does not start with an envelope");
            }
            if ((envelope ? ENVELOPE_LENGTH : 0) + GcmStreams.ciphertextLength(plain.length) != stored.length) {
                problems.add(path + " (" + kind + "): " + stored.length + " bytes stored for " + plain.length + " of plaintext");
            }
            long listed = sealedFs.getFileStatus(sealedPath).getLen();
            if (listed != plain.length) {
                problems.add(sealedPath + " (" + kind + "): listed as " + listed + " bytes, reads " + plain.length);
            }
            // Whatever the kind: the stored bytes do not begin as the plaintext does.
            if (plain.length >= 4 && startsWith(stored, Arrays.copyOf(plain, Math.min(16, plain.length)))) {
                problems.add(path + " (" + kind + ") begins as its plaintext does");
            }
            byte[] magic = MAGIC.get(content(kind));
            if (magic != null && !startsWith(plain, magic)) {
                problems.add(sealedPath + " (" + kind + ") does not decrypt to a " + content(kind) + " file");
            }
        }
        List<String> expected = new ArrayList<>(List.of("manifest", "manifest list", "metadata.json", "statistics"));
        for (String format : formats) {
            expected.addAll(List.of("data " + format, "delete " + format));
        }
        for (String kind : expected) {
            if (kinds.getOrDefault(kind, 0) == 0) {
                problems.add("no " + kind + " file under " + raw);
            }
        }
        assertEquals(List.of(), problems, "the files under " + raw + " (" + kinds + ")");
        System.out.printf("stored files under %s, each sealed and read whole: %s%n", raw, kinds);
        return kinds;
    }

    /** What a table file is, by its name (Iceberg's naming), or a failure for a file no table has. */
    private static String kind(String path, String name) {
        if (path.contains("/metadata/")) {
            if (name.endsWith(".metadata.json")) {
                return "metadata.json";
            } else if (name.equals("version-hint.text")) {
                return "version-hint";
            } else if (name.startsWith("snap-") && name.endsWith(".avro")) {
                return "manifest list";
            } else if (name.endsWith(".avro")) {
                return "manifest";
            } else if (name.endsWith(".stats")) {
                return "statistics";
            }
        } else if (path.contains("/data/") && (name.endsWith(".parquet") || name.endsWith(".orc"))) {
            return (name.contains("-deletes.") ? "delete" : "data") + " " + name.substring(name.lastIndexOf('.') + 1);
        }
        throw new AssertionError("a file that no Iceberg table has: " + path);
    }

    private static String content(String kind) {
        return switch (kind) {
            case "metadata.json" -> "json";
            case "manifest", "manifest list" -> "avro";
            case "statistics" -> "puffin";
            case "data parquet", "delete parquet" -> "parquet";
            case "data orc", "delete orc" -> "orc";
            default -> kind;
        };
    }

    private static boolean startsWith(byte[] bytes, byte[] prefix) {
        return bytes.length >= prefix.length && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
    }
}
