package io.sealpipe.it.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hadoop 3.4.1's KMS ({@code KMSWebServer}) in a JVM of its own, on 127.0.0.1: Spark 3.5's
 * shaded Hadoop 3.3 client on the test class path and the KMS's own Hadoop 3.4 server class path
 * cannot share one. Its class path is resolved by Maven (antrun's plugin class path, written to
 * {@code sealpipe.it.kms.classpath}); its keys live in a JCEKS keystore under {@code dir}, its
 * configuration and log ({@code kms.log}) too. Every user may do everything (simple
 * authentication, ACLs of {@code *}): the tests are about the key reaching executors, not about
 * the KMS's access control. Its own meters of the calls it answered are read from its web server's
 * {@code /jmx} ({@link #meters()}).
 */
final class Kms implements AutoCloseable {
    private static final String MAIN = "org.apache.hadoop.crypto.key.kms.server.KMSWebServer";

    private final Process process;
    private final int port;

    private Kms(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** The port on 127.0.0.1 that the KMS listens on. */
    int port() {
        return port;
    }

    /** The provider URI for Hadoop's {@code KMSClientProvider}. */
    String providerUri() {
        return "kms://http@127.0.0.1:" + port + "/kms";
    }

    /** Starts the KMS and waits until it answers; its files under {@code dir}. */
    static Kms start(Path dir) throws Exception {
        Path conf = Files.createDirectories(dir.resolve("conf"));
        Path classPathFile = Path.of(System.getProperty("sealpipe.it.kms.classpath", "sealpipe.it.kms.classpath is not set"));
        String classPath = Files.readString(classPathFile).trim();
        Map<String, String> site = new LinkedHashMap<>();
        site.put("hadoop.kms.http.host", "127.0.0.1");
        // A port the system picks when Jetty binds (no port chosen here and freed, which another
        // process could take first); the KMS logs it.
        site.put("hadoop.kms.http.port", "0");
        site.put("hadoop.kms.key.provider.uri", "jceks://file@" + dir.toAbsolutePath().resolve("kms.keystore"));
        site.put("hadoop.kms.authentication.type", "simple");
        site.put("hadoop.http.temp.dir", dir.toAbsolutePath().resolve("http-tmp").toString());
        write(conf.resolve("kms-site.xml"), site);
        Map<String, String> acls = new LinkedHashMap<>();
        for (String op : List.of("CREATE", "DELETE", "ROLLOVER", "GET", "GET_KEYS", "GET_METADATA",
                "SET_KEY_MATERIAL", "GENERATE_EEK", "DECRYPT_EEK")) {
            acls.put("hadoop.kms.acl." + op, "*");
        }
        for (String op : List.of("MANAGEMENT", "GENERATE_EEK", "DECRYPT_EEK", "READ")) {
            acls.put("default.key.acl." + op, "*");
        }
        write(conf.resolve("kms-acls.xml"), acls);
        write(conf.resolve("core-site.xml"), Map.of()); // the KMS reads it and fails if it is missing
        Path log4j = conf.resolve("kms-log4j.properties");
        Files.writeString(log4j, """
                log4j.rootLogger=INFO, stdout
                log4j.appender.stdout=org.apache.log4j.ConsoleAppender
                log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
                log4j.appender.stdout.layout.ConversionPattern=%d{ISO8601} %-5p %c{1} - %m%n
                """);

        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        // JAXB (Jersey 1's JSON) injects classes into java.lang's loader.
        command.add("--add-opens=java.base/java.lang=ALL-UNNAMED");
        command.add("-Dkms.config.dir=" + conf.toAbsolutePath());
        command.add("-Dlog4j.configuration=" + log4j.toAbsolutePath().toUri());
        command.add("-Dkms.log.dir=" + dir.toAbsolutePath());
        command.add("-Dhadoop.log.dir=" + dir.toAbsolutePath());
        command.add("-cp");
        command.add(classPath);
        command.add(MAIN);
        Path log = dir.resolve("kms.log");
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        // A test JVM that exits without @AfterAll (interrupted build) still ends its KMS; only a
        // SIGKILL of the test JVM leaves it running.
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "kms-stop"));
        try {
            Cluster.await(() -> !process.isAlive() || boundPort(log) > 0, "the KMS logs the port it is bound to");
            exitedIfDead(process, log);
            Kms kms = new Kms(process, boundPort(log));
            Cluster.await(() -> !process.isAlive() || kms.answers(), "the KMS answers on " + kms.providerUri());
            exitedIfDead(process, log);
            return kms;
        } catch (Throwable e) {
            stop(process);
            throw e;
        }
    }

    private static final Pattern BOUND = Pattern.compile("HttpServer2 - Jetty bound to port (\\d+)");

    /** The port Hadoop's HttpServer2 logged that it bound, or 0 before it has. */
    private static int boundPort(Path log) {
        try {
            // ISO-8859-1: any byte decodes, also the half-written last character of a log in progress.
            Matcher bound = BOUND.matcher(Files.readString(log, StandardCharsets.ISO_8859_1));
            return bound.find() ? Integer.parseInt(bound.group(1)) : 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void exitedIfDead(Process process, Path log) {
        if (!process.isAlive()) {
            throw new IllegalStateException("the KMS exited with " + process.exitValue() + ": see " + log);
        }
    }

    private boolean answers() {
        try {
            URL url = new URL("http://127.0.0.1:" + port + "/kms/v1/keys/names?user.name=sealpipe");
            HttpURLConnection connection = (HttpURLConnection) url.openConnection();
            connection.setConnectTimeout(5_000);
            connection.setReadTimeout(30_000);
            try {
                return connection.getResponseCode() == 200;
            } finally {
                connection.disconnect();
            }
        } catch (IOException e) {
            return false;
        }
    }

    private static final Pattern METER = Pattern.compile("metrics:name=hadoop\\.kms\\.(.+)\\.calls\\.meter");

    /**
     * The KMS's own meters of the requests it answered, as its web server's {@code /jmx} shows
     * them (the Dropwizard meters of {@code KMSWebApp}): each count by the meter's name without
     * {@code hadoop.kms.} and {@code .calls.meter}: {@code generate_eek} and {@code decrypt_eek}
     * (one per request, however many keys it asks for), {@code key} (a key's versions),
     * {@code admin} (create, roll, delete, metadata), {@code reencrypt_eek},
     * {@code reencrypt_eek_batch}, and the others ({@code unauthenticated}: an HTTP 401, as the
     * first request of each new KMS client gets before it authenticates; {@code unauthorized}: a
     * refusal by the ACLs; {@code invalid}: any other status but 200 and 201). A read counts in
     * none of the served ones, but may count as {@code invalid} (the {@code /jmx} servlet sets no
     * status, which {@code KMSAuthenticationFilter} takes for neither 200 nor 201), before or after
     * its own answer.
     */
    Map<String, Long> meters() throws IOException {
        URL url = new URL("http://127.0.0.1:" + port + "/jmx?qry=metrics:*&user.name=sealpipe");
        HttpURLConnection connection = (HttpURLConnection) url.openConnection();
        connection.setConnectTimeout(5_000);
        connection.setReadTimeout(30_000);
        JsonNode beans;
        try {
            if (connection.getResponseCode() != 200) {
                throw new IOException(url + ": HTTP " + connection.getResponseCode());
            }
            try (InputStream in = connection.getInputStream()) {
                beans = new ObjectMapper().readTree(in).path("beans");
            }
        } finally {
            connection.disconnect();
        }
        Map<String, Long> meters = new TreeMap<>();
        for (JsonNode bean : beans) {
            Matcher meter = METER.matcher(bean.path("name").asText());
            if (meter.matches()) {
                meters.put(meter.group(1), bean.path("Count").asLong());
            }
        }
        // All nine or none: a missing meter would read as 0 calls.
        for (String name : List.of("generate_eek", "decrypt_eek", "key", "admin", "reencrypt_eek",
                "reencrypt_eek_batch", "unauthenticated", "unauthorized", "invalid")) {
            if (!meters.containsKey(name)) {
                throw new IOException(url + " shows no meter hadoop.kms." + name + ".calls.meter: " + meters);
            }
        }
        return meters;
    }

    @Override
    public void close() throws InterruptedException {
        stop(process);
    }

    private static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(1, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            process.waitFor(1, TimeUnit.MINUTES);
        }
    }

    private static void write(Path file, Map<String, String> properties) throws IOException {
        StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
        properties.forEach((name, value) -> xml.append("  <property><name>").append(name).append("</name><value>")
                .append(value).append("</value></property>\n"));
        xml.append("</configuration>\n");
        Files.writeString(file, xml);
    }
}
