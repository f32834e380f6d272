package io.sealpipe.it.spark;

import io.sealpipe.it.net.Listeners;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A MiniDFSCluster of Hadoop 3.4.1 (one NameNode, one DataNode) in a JVM of its own, on
 * 127.0.0.1: Spark 3.5's shaded Hadoop 3.3 client on the test class path and the cluster's
 * Hadoop 3.4 server class path cannot share one (as {@link Kms}). The test JVM reaches it with
 * Spark's own HDFS client. The child runs {@code src/test/hdfs/MiniHdfsServer.java} as a
 * single-file program (system property {@code sealpipe.it.hdfs.main}) on the class path Maven
 * resolved into {@code sealpipe.it.hdfs.classpath}; it prints the cluster's URI when the
 * DataNode has registered and shuts the cluster down when its standard input ends, which
 * {@link #close()} does (and a JVM that ends without it, since the pipe closes with it). Its
 * files and its log ({@code hdfs.log}) are under {@code dir}.
 */
final class Hdfs implements AutoCloseable {
    private final Process process;
    private final URI uri;
    private final Path log;

    private Hdfs(Process process, URI uri, Path log) {
        this.process = process;
        this.uri = uri;
        this.log = log;
    }

    /** hdfs://127.0.0.1:PORT, the NameNode. */
    URI uri() {
        return uri;
    }

    /** Starts the cluster and returns once its DataNode has registered; its files under {@code dir}. */
    static Hdfs start(Path dir) throws Exception {
        Files.createDirectories(dir);
        String classPath = Files.readString(Path.of(property("sealpipe.it.hdfs.classpath"))).trim();
        Path log4j = dir.resolve("hdfs-log4j.properties");
        Files.writeString(log4j, """
                log4j.rootLogger=WARN, stderr
                log4j.logger.org.apache.hadoop.hdfs.MiniDFSCluster=INFO
                log4j.appender.stderr=org.apache.log4j.ConsoleAppender
                log4j.appender.stderr.Target=System.err
                log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
                log4j.appender.stderr.layout.ConversionPattern=%d{ISO8601} %-5p %c{1} - %m%n
                """);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx384m");
        command.add("-Dlog4j.configuration=" + log4j.toAbsolutePath().toUri());
        command.add("-Dhadoop.log.dir=" + dir.toAbsolutePath());
        command.add("-Djava.net.preferIPv4Stack=true");
        command.add("-cp");
        command.add(classPath);
        command.add(property("sealpipe.it.hdfs.main"));
        command.add(dir.resolve("dfs").toAbsolutePath().toString());
        Path log = dir.resolve("hdfs.log");
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectError(log.toFile())
                .start();
        try {
            // Blocks until the child prints the URI, or ends (its stdout then ends too).
            String line = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)).readLine();
            if (line == null || !line.startsWith("hdfs://")) {
                throw new IllegalStateException("the MiniDFSCluster did not start (" + line + "): see " + log);
            }
            Hdfs hdfs = new Hdfs(process, URI.create(line.trim()), log);
            hdfs.checkListenersOnLoopback();
            return hdfs;
        } catch (Throwable e) {
            stop(process);
            throw e;
        }
    }

    /** Every socket the cluster's JVM listens on is bound to 127.0.0.1. */
    private void checkListenersOnLoopback() {
        List<Listeners.Listener> listeners = Listeners.of(process.pid());
        if (listeners.isEmpty() || !listeners.stream().allMatch(Listeners.Listener::onLoopbackAddress)) {
            throw new IllegalStateException("the MiniDFSCluster listens elsewhere than on 127.0.0.1: " + listeners);
        }
    }

    /** Shuts the cluster down (the child's standard input ends) and waits for its JVM to exit. */
    @Override
    public void close() throws InterruptedException {
        stop(process);
        if (process.exitValue() != 0) {
            throw new IllegalStateException("the MiniDFSCluster's JVM exited with " + process.exitValue() + ": see " + log);
        }
    }

    private static void stop(Process process) throws InterruptedException {
        try {
            process.getOutputStream().close();
        } catch (IOException e) {
            // the child has ended already
        }
        if (!process.waitFor(2, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            process.waitFor(1, TimeUnit.MINUTES);
        }
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new IllegalStateException("system property " + name + " is not set: run the tests through Maven");
        }
        return value;
    }
}
