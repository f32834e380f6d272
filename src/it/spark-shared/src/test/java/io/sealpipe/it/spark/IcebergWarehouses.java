package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * What the Iceberg test classes ({@link IcebergSealedTablesTest}, {@link IcebergSealedFileIOTest},
 * {@link IcebergRequestsTest}) share: the Spark projects' surefire execution {@code iceberg} runs
 * them in one JVM, and each asks for this in its {@code @BeforeAll}
 * ({@code @ExtendWith(IcebergWarehouses.Shared.class)}), so that they start one SparkSession, one
 * MiniDFSCluster and one S3Proxy between them, and run the plain {@link IcebergScript} once.
 *
 * <ul>
 *   <li>One SparkSession ({@code local[2]}, Iceberg's SQL extensions), whose Hadoop settings
 *       have the sealed schemes {@code shdfs} (over {@code hdfs}) and {@code ss3a} (over
 *       {@code s3a}, S3Proxy's), with direct keys: one 256-bit key in a JCEKS keystore
 *       ({@link #keystore()}). The classes add their catalogs to it ({@link #catalog}), each
 *       named apart.
 *   <li>{@link #hdfs()} (a MiniDFSCluster of Hadoop 3.4.1 in a JVM of its own) and {@link #s3()}
 *       (S3Proxy), each started on first use, on 127.0.0.1.
 *   <li>{@link #plain(String)}: the script's results on a plain warehouse (the Hadoop catalog on
 *       {@code hdfs://}), once per format, which every sealed run is compared with
 *       ({@link #runSealed}): the results hold no path, id or time, so one plain run stands for
 *       every catalog and storage.
 * </ul>
 *
 * <p>All of it is closed after the last class, in JUnit's root store (or when the class alone
 * runs, after it).
 */
final class IcebergWarehouses implements ExtensionContext.Store.CloseableResource {
    static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target"));
    static final Path DIR = TARGET.resolve("iceberg");
    static final String KEY = "data";
    static final String PLAIN_CATALOG = "plain";

    private final Path keystore;
    private final SparkSession spark;
    private final Map<String, List<IcebergScript.Result>> plain = new HashMap<>();
    private final Map<String, Throwable> plainFailures = new HashMap<>();
    private Hdfs hdfs;
    private S3Server s3;

    /** Resolves an {@link IcebergWarehouses} parameter to the one of this JVM, started on first use. */
    static final class Shared implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == IcebergWarehouses.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            return context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                    .getOrComputeIfAbsent(IcebergWarehouses.class, key -> start(), IcebergWarehouses.class);
        }
    }

    private IcebergWarehouses(Path keystore, SparkSession spark) {
        this.keystore = keystore;
        this.spark = spark;
    }

    private static IcebergWarehouses start() {
        try {
            checksumsOnlyWhereRequired();
            EncryptionJob.deleteTree(DIR);
            Files.createDirectories(DIR);
            Path keystore = DIR.resolve("keys.jceks").toAbsolutePath();
            KeyProvider provider = KeyProviderFactory.get(URI.create("jceks://file" + keystore), new Configuration(false));
            provider.createKey(KEY, new KeyProvider.Options(new Configuration(false)).setBitLength(256));
            provider.flush();
            SparkSession spark = SparkSession.builder()
                    .master("local[2]")
                    .appName("iceberg")
                    .config("spark.ui.enabled", "false")
                    .config("spark.driver.host", "127.0.0.1")
                    .config("spark.driver.bindAddress", "127.0.0.1")
                    .config("spark.sql.shuffle.partitions", "2")
                    .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
                    .config("spark.hadoop.fs.shdfs.impl", SealedFileSystem.class.getName())
                    .config("spark.hadoop." + SealedFileSystem.wrapsKey("shdfs"), "hdfs")
                    .config("spark.hadoop.fs.ss3a.impl", SealedFileSystem.class.getName())
                    .config("spark.hadoop." + SealedFileSystem.wrapsKey("ss3a"), "s3a")
                    .config("spark.hadoop." + SealedFileSystem.KEY_PROVIDER_PATH, "jceks://file" + keystore)
                    .config("spark.hadoop." + SealedFileSystem.KEY_NAME, KEY)
                    // HDFS's client asks again after 10 ms, not 400, whether a file it closes is
                    // complete (as hadoop-3.4's MiniHdfs: on one host the DataNode's report comes
                    // within milliseconds).
                    .config("spark.hadoop.dfs.client.block.write.locateFollowingBlock.initial.delay.ms", "10")
                    .config("spark.hadoop.dfs.client.block.write.locateFollowingBlock.retries", "12")
                    .getOrCreate();
            return new IcebergWarehouses(keystore, spark);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot make the keystore under " + DIR + ": " + e, e);
        }
    }

    /**
     * S3Proxy does not take the SDK v2's default checksums since 2.30 (an {@code aws-chunked}
     * body with a trailing CRC): checksums only where S3 requires them, as S3A's own settings
     * for third-party stores do. JVM-wide: Spark's local mode makes every S3 client here.
     */
    private static void checksumsOnlyWhereRequired() {
        System.setProperty("aws.requestChecksumCalculation", "WHEN_REQUIRED");
        System.setProperty("aws.responseChecksumValidation", "WHEN_REQUIRED");
    }

    SparkSession spark() {
        return spark;
    }

    /** The JCEKS keystore of the direct key {@link #KEY}. */
    Path keystore() {
        return keystore;
    }

    /** The MiniDFSCluster, started on first use. */
    synchronized Hdfs hdfs() throws Exception {
        if (hdfs == null) {
            hdfs = Hdfs.start(DIR.resolve("hdfs"));
        }
        return hdfs;
    }

    /** S3Proxy, started on first use; the session's S3A settings then reach it. */
    synchronized S3Server s3() throws Exception {
        if (s3 == null) {
            s3 = S3Server.start();
            s3.s3aSettings().forEach((key, value) -> spark.sparkContext().hadoopConfiguration().set(key, value));
        }
        return s3;
    }

    /** {@code hdfs://localhost:<port><path>}. */
    String hdfs(String path) throws Exception {
        return "hdfs://localhost:" + hdfs().uri().getPort() + path;
    }

    /**
     * Adds Iceberg catalog {@code name} to the session, on Iceberg's {@code HadoopFileIO} unless
     * {@code settings} name another {@code io-impl}.
     */
    void catalog(String name, Map<String, String> settings) {
        String prefix = "spark.sql.catalog." + name;
        spark.conf().set(prefix, "org.apache.iceberg.spark.SparkCatalog");
        spark.conf().set(prefix + ".io-impl", "org.apache.iceberg.hadoop.HadoopFileIO");
        settings.forEach((key, value) -> spark.conf().set(prefix + "." + key, value));
    }

    /** The JDBC catalog's settings: its own SQLite file under target/, its warehouse. */
    static Map<String, String> jdbc(String name, String warehouse) {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("type", "jdbc");
        settings.put("uri", "jdbc:sqlite:" + DIR.resolve(name + "-catalog.db").toAbsolutePath());
        settings.put("jdbc.schema-version", "V1");
        settings.put("warehouse", warehouse);
        return settings;
    }

    /** {@code settings} with Iceberg's S3FileIO as the catalog's FileIO, on S3Proxy. */
    Map<String, String> s3FileIO(Map<String, String> settings) throws Exception {
        Map<String, String> s3a = s3().s3aSettings();
        settings.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
        settings.put("s3.endpoint", s3().endpoint());
        settings.put("s3.path-style-access", "true");
        settings.put("s3.access-key-id", s3a.get("fs.s3a.access.key"));
        settings.put("s3.secret-access-key", s3a.get("fs.s3a.secret.key"));
        settings.put("client.region", "us-east-1");
        return settings;
    }

    /** {@code settings} (a catalog's on some FileIO) with that FileIO wrapped by SealedFileIO, direct keys from {@link #keystore()}. */
    Map<String, String> sealedFileIO(Map<String, String> settings) {
        settings.put("sealpipe.io-impl", settings.get("io-impl"));
        settings.put("io-impl", "io.sealpipe.iceberg.SealedFileIO");
        settings.put(SealedFileSystem.KEY_PROVIDER_PATH, "jceks://file" + keystore);
        settings.put(SealedFileSystem.KEY_NAME, KEY);
        return settings;
    }

    /**
     * The script's results on the plain warehouse ({@code hdfs://.../plain-warehouse}, the Hadoop
     * catalog {@value #PLAIN_CATALOG}) for {@code format}, run on first use; checked to have done
     * what the script is for: delete files, one orphan removed, one snapshot left, a statistics
     * file written.
     */
    synchronized List<IcebergScript.Result> plain(String format) throws Exception {
        Throwable failed = plainFailures.get(format);
        if (failed != null) { // its table half made: a new run would fail on that, not on what failed
            throw new AssertionError("the plain run of the script in " + format + " failed in an earlier class: " + failed,
                    failed);
        }
        List<IcebergScript.Result> results = plain.get(format);
        if (results == null) {
            try {
                results = runPlain(format);
            } catch (Exception | AssertionError e) {
                plainFailures.put(format, e);
                throw e;
            }
            plain.put(format, results);
        }
        return results;
    }

    private List<IcebergScript.Result> runPlain(String format) throws Exception {
        catalog(PLAIN_CATALOG, Map.of("type", "hadoop", "warehouse", hdfs("/plain-warehouse")));
        long start = System.nanoTime();
        List<IcebergScript.Result> results = IcebergScript.run(spark, PLAIN_CATALOG, "t_" + format, format, false);
        System.out.printf("%s, %s: %d statements in %.1f s%n", PLAIN_CATALOG, format, results.size(),
                (System.nanoTime() - start) / 1e9);
        String files = find(results, ".files").rows().toString();
        assertTrue(files.contains("[1," + format.toUpperCase()), format + ": no position delete files in " + files);
        assertEquals(List.of("orphan-0." + format), find(results, "remove_orphan_files").rows(), format);
        assertEquals(List.of("[1]"), find(results, "snapshots after expire_snapshots").rows(), format);
        assertEquals(List.of("1"), find(results, "compute_table_stats").rows(), format);
        return results;
    }

    /**
     * Runs the script on sealed catalog {@code catalog} for {@code format} ({@code prefixListing}:
     * orphans listed through the table's FileIO) and checks that each statement gives the plain
     * warehouse's result.
     */
    void runSealed(String catalog, String format, boolean prefixListing) throws Exception {
        List<IcebergScript.Result> plainResults = plain(format);
        long start = System.nanoTime();
        List<IcebergScript.Result> sealed = IcebergScript.run(spark, catalog, "t_" + format, format, prefixListing);
        assertEquals(plainResults.size(), sealed.size(), "statements");
        for (int i = 0; i < plainResults.size(); i++) {
            assertEquals(plainResults.get(i), sealed.get(i), catalog + ", " + format + ", statement " + i);
        }
        System.out.printf("%s, %s: %d statements in %.1f s, the same results as the plain warehouse%n", catalog, format,
                sealed.size(), (System.nanoTime() - start) / 1e9);
    }

    private static IcebergScript.Result find(List<IcebergScript.Result> results, String prefix) {
        return results.stream().filter(r -> r.statement().startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no result " + prefix + " in " + results));
    }

    @Override
    public void close() throws Exception {
        try {
            try {
                spark.stop();
            } finally {
                FileSystem.closeAll();
            }
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
}
