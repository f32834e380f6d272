package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sealpipe.commons.SealpipeCryptoCipher;
import io.sealpipe.engine.Engines;
import io.sealpipe.it.net.Listeners;
import java.io.File;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Spark's {@code local-cluster[2,1,1024]} as Spark's own tests start it from Maven artifacts only:
 * the standalone Master and two Workers in this JVM, each executor a {@code java} process of its
 * own (the JDK of this JVM), started by its Worker.
 *
 * <p>With {@code spark.testing} set, {@code StandaloneSchedulerBackend} gives executors this JVM's
 * {@code java.class.path}, which under surefire is a manifest-only jar listing every test
 * dependency, sealpipe's copy in {@code ~/.m2} included. While a context starts, this class sets
 * {@code java.class.path} to that list without sealpipe, so that executors load sealpipe only from
 * {@code spark.executor.extraClassPath}: the jar the main build just made ({@code sealpipe.it.jar}).
 * A {@link #probe} in the executors reports what they loaded.
 *
 * <p>Workers keep their work directories (executors' {@code stdout} and {@code stderr}) in a
 * temporary directory that Spark deletes when this JVM exits; {@link #keepLogs} copies them under
 * {@code target/cluster-logs} first.
 */
final class Cluster {
    static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target")).toAbsolutePath();
    /** The jar under test, as the main build wrote it (not the copy installed into ~/.m2). */
    static final Path SEALPIPE_JAR = Path.of(System.getProperty("sealpipe.it.jar", "sealpipe.it.jar is not set"));
    static final String MASTER = "local-cluster[2,1,1024]";
    static final int EXECUTORS = 2;
    static final String CIPHER_RESOURCE = SealpipeCryptoCipher.class.getName().replace('.', '/') + ".class";
    static final String ENGINE_LINE = "sealpipe engine ";
    /** Generous: executors start as JVMs on a machine shared with other builds. */
    static final Duration DEADLINE = Duration.ofMinutes(5);

    private Cluster() {}

    /** Where one test class keeps its cluster's files: Spark's home, temporary and local dirs. */
    static Path home(String name) {
        return TARGET.resolve("cluster/" + name);
    }

    /**
     * A configuration for {@code local-cluster}: executors of 512 MiB with sealpipe's jar on their
     * {@code extraClassPath}, the JDK of this JVM, everything on 127.0.0.1, files under {@code dir}.
     */
    static SparkConf conf(String name, Path dir) {
        return new SparkConf(false)
                .setMaster(MASTER)
                .setAppName("sealpipe-cluster-" + name)
                .set("spark.ui.enabled", "false")
                .set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1")
                .set("spark.local.dir", dir.resolve("local").toString())
                .set("spark.executor.memory", "512m")
                .set("spark.executor.extraClassPath", SEALPIPE_JAR.toString())
                .set("spark.executorEnv.JAVA_HOME", System.getProperty("java.home"))
                .set("spark.executorEnv.SPARK_SCALA_VERSION", scalaVersion())
                .set("spark.task.maxFailures", "4");
    }

    /**
     * Starts a context on {@code conf} and waits until both executors have registered. Spark's home
     * ({@code spark.test.home}), its temporary directory and the class path handed to executors are
     * this JVM's system properties: set here, before Spark reads them.
     */
    static synchronized JavaSparkContext start(SparkConf conf, Path dir) throws Exception {
        if (!Files.isRegularFile(SEALPIPE_JAR)) {
            throw new IllegalStateException("sealpipe.it.jar: no file " + SEALPIPE_JAR);
        }
        Path sparkHome = Files.createDirectories(dir.resolve("spark-home"));
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        Files.createDirectories(dir.resolve("local"));
        System.setProperty("spark.testing", "1");
        System.setProperty("spark.test.home", sparkHome.toString());
        System.setProperty("java.io.tmpdir", tmp.toString()); // the Workers' work dirs (Utils.createTempDir)
        String classPath = System.getProperty("java.class.path");
        System.setProperty("java.class.path", String.join(File.pathSeparator, executorClassPath()));
        JavaSparkContext sc;
        try {
            sc = new JavaSparkContext(conf); // StandaloneSchedulerBackend.start reads java.class.path
        } finally {
            System.setProperty("java.class.path", classPath);
        }
        try {
            await(() -> sc.sc().statusTracker().getExecutorInfos().length == EXECUTORS + 1, // with the driver
                    "executors registered");
            // An executor's block manager registers once its server listens.
            await(() -> sc.sc().getExecutorMemoryStatus().size() == EXECUTORS + 1, "executors' block managers registered");
            assertListenersOnLoopback(sc);
        } catch (Throwable e) {
            sc.stop();
            throw e;
        }
        return sc;
    }

    /**
     * Checks that every server of this JVM and of the processes it started listens on 127.0.0.1
     * only: the Master, the Worker, the driver and its block manager here; the executors' block
     * managers, each in a JVM of its own; a KMS, if one runs ({@code SPARK_LOCAL_IP}, {@code spark.driver.bindAddress},
     * {@code hadoop.kms.http.host}).
     */
    static void assertListenersOnLoopback(JavaSparkContext sc) {
        List<Listeners.Listener> listeners = Listeners.of(ProcessHandle.current().pid());
        // This context's block managers (an earlier context's executors may still be exiting):
        // the executors' each listen in an executor process of their own.
        Set<Integer> blockManagerPorts = new TreeSet<>();
        for (scala.collection.Iterator<String> hostPorts = sc.sc().getExecutorMemoryStatus().keysIterator(); hostPorts.hasNext();) {
            String hostPort = hostPorts.next();
            blockManagerPorts.add(Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1)));
        }
        long executors = listeners.stream()
                .filter(l -> blockManagerPorts.contains(l.port()) && l.inProcess(EXECUTOR_BACKEND))
                .map(Listeners.Listener::pid).distinct().count();
        assertEquals(EXECUTORS, executors, () -> "executor processes listening on the block manager ports "
                + blockManagerPorts + ": " + listeners);
        assertEquals(List.of(), listeners.stream().filter(l -> !l.onLoopbackAddress()).toList(),
                () -> "listeners not on 127.0.0.1, of " + listeners);
    }

    private static final String EXECUTOR_BACKEND = "org.apache.spark.executor.CoarseGrainedExecutorBackend";

    /**
     * Copies the work dirs of the Workers started by {@link #start} with {@code dir} (executors'
     * {@code stdout} and {@code stderr}) under {@code target/cluster-logs/<name>}.
     */
    static void keepLogs(Path dir, String name) throws IOException {
        Path tmp = dir.resolve("tmp");
        if (!Files.isDirectory(tmp)) {
            return;
        }
        Path to = TARGET.resolve("cluster-logs/" + name);
        try (Stream<Path> files = Files.walk(tmp)) {
            for (Path p : files.filter(Files::isRegularFile)
                    .filter(p -> tmp.relativize(p).getName(0).toString().startsWith("worker-")).toList()) {
                Path copy = to.resolve(tmp.relativize(p).toString());
                Files.createDirectories(copy.getParent());
                Files.copy(p, copy, StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /** Polls {@code condition} until it holds; fails after {@link #DEADLINE}. */
    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + DEADLINE + ": " + what);
            }
            Thread.sleep(50);
        }
    }

    /**
     * This JVM's test class path without sealpipe: surefire's list ({@code surefire.test.class.path})
     * or the {@code Class-Path} of its manifest-only jar.
     */
    static List<String> executorClassPath() throws IOException {
        List<String> entries = new ArrayList<>();
        String listed = System.getProperty("surefire.test.class.path");
        if (listed != null && !listed.isBlank()) {
            Collections.addAll(entries, listed.split(File.pathSeparator));
        } else {
            for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
                entries.addAll(expandManifest(entry));
            }
        }
        List<String> kept = new ArrayList<>();
        for (String entry : entries) {
            String file = Path.of(entry).getFileName().toString();
            if (!(file.startsWith("sealpipe-") && file.endsWith(".jar"))) {
                kept.add(entry);
            }
        }
        return kept;
    }

    private static List<String> expandManifest(String entry) throws IOException {
        if (!entry.endsWith(".jar")) {
            return List.of(entry);
        }
        try (JarFile jar = new JarFile(entry)) {
            Manifest manifest = jar.getManifest();
            String listed = manifest == null ? null : manifest.getMainAttributes().getValue("Class-Path");
            if (listed == null) {
                return List.of(entry);
            }
            List<String> out = new ArrayList<>();
            for (String url : listed.trim().split("\\s+")) {
                try {
                    out.add(Path.of(Path.of(entry).toUri().resolve(url)).toString());
                } catch (IllegalArgumentException e) {
                    throw new IOException("Class-Path entry " + url + " of " + entry, e);
                }
            }
            return out;
        }
    }

    private static String scalaVersion() {
        String version = scala.util.Properties.versionNumberString();
        return version.substring(0, version.lastIndexOf('.'));
    }

    /** What an executor reports about itself and the sealpipe it loaded. */
    record Report(String executorId, long pid, String javaHome, String codeSource, List<String> copies,
            List<String> engineLinesBefore, String engine, String engineReport) implements Serializable {}

    /**
     * A job of {@link #EXECUTORS} tasks that meet before reporting (each writes its pid under
     * {@code meet} and waits until there are as many pids as tasks), so that with one core per
     * executor each task runs in a different executor. Each reports its JVM: the code source of
     * {@code SealpipeCryptoCipher}, every copy of it the class loader sees, the sealpipe log lines
     * written before the probe touched sealpipe's engines, and {@code Engines.report()}.
     */
    static List<Report> probe(JavaSparkContext sc, Path meet) throws IOException {
        Files.createDirectories(meet);
        String dir = meet.toString();
        List<Integer> tasks = new ArrayList<>();
        for (int i = 0; i < EXECUTORS; i++) {
            tasks.add(i);
        }
        return sc.parallelize(tasks, EXECUTORS).mapPartitions(it -> probeTask(dir), false).collect();
    }

    private static Iterator<Report> probeTask(String meet) throws Exception {
        meet(Path.of(meet));
        // The executor's sealpipe log (log4j2-test.properties; the path is relative to the
        // executor's working directory, its folder in the Worker's work dir).
        Path log = Path.of(System.getProperty("sealpipe.it.log", "target/sealpipe-it.log"));
        List<String> before = Files.exists(log)
                ? Files.readAllLines(log).stream().filter(l -> l.startsWith(ENGINE_LINE)).toList()
                : List.of();
        URL location = SealpipeCryptoCipher.class.getProtectionDomain().getCodeSource().getLocation();
        List<String> copies = new ArrayList<>();
        for (URL url : Collections.list(Thread.currentThread().getContextClassLoader().getResources(CIPHER_RESOURCE))) {
            copies.add(url.toString());
        }
        var report = Engines.report();
        return List.of(new Report(SparkEnv.get().executorId(), ProcessHandle.current().pid(),
                System.getProperty("java.home"), path(location), copies, before,
                report.chosen().map(e -> e.id()).orElse("none"), report.describe())).iterator();
    }

    /** Writes this JVM's pid under {@code meet}; waits until {@link #EXECUTORS} pids are there. */
    static void meet(Path meet) throws IOException, InterruptedException {
        long pid = ProcessHandle.current().pid();
        Files.writeString(meet.resolve("pid-" + pid), Long.toString(pid), StandardCharsets.US_ASCII);
        await(() -> {
            try (Stream<Path> files = Files.list(meet)) {
                return files.filter(p -> p.getFileName().toString().startsWith("pid-")).count() >= EXECUTORS;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, EXECUTORS + " executors meet under " + meet);
    }

    static String path(URL location) {
        try {
            return Path.of(location.toURI()).toRealPath().toString();
        } catch (URISyntaxException | IOException e) {
            return location.toString();
        }
    }
}
