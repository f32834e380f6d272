package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built jar in a project that depends on sealpipe alone: a child JVM whose class path is
 * only the jar and slf4j-api (no JNA, no snappy-java, no picocli), or the jar alone, runs
 * {@code it/NoOptionalDependenciesProbe.java}. Each absent optional dependency must make only
 * its own feature unavailable, saying what to add; everything else must work, the native
 * library included (the jar as a module: ModuleConsumerIT). SLF4J is optional too: without it
 * sealpipe logs through the JDK's {@code System.Logger} (java.util.logging unless the
 * application installs another backend); with it, through SLF4J only. Run by
 * maven-failsafe-plugin after {@code package}, which passes the paths.
 */
class OptionalDependenciesIT {
    private static final Path JAR = Path.of(property("sealpipe.it.jar"));
    private static final Path SLF4J = Path.of(property("sealpipe.it.slf4j"));
    private static final Path SLF4J_SIMPLE = Path.of(property("sealpipe.it.slf4j.simple"));
    /**
     * java.util.logging's console format in the probe: the logger's name and the message, so
     * that a line reads the same in every locale (the level's name is localized).
     */
    private static final String JUL_FORMAT = "-Djava.util.logging.SimpleFormatter.format=jul %3$s: %5$s%n";
    /** sealpipe's engine line through java.util.logging, in {@link #JUL_FORMAT}. */
    private static final String JUL_ENGINE_LINE = "jul io.sealpipe.engine.Engines: sealpipe engine ";

    @TempDir
    Path dir;

    private static String property(String name) {
        return Objects.requireNonNull(System.getProperty(name), name + " is not set: run with mvn verify");
    }

    /** The probe with the jar and slf4j-api as its class path. */
    private String probe(String... jvmOptions) throws IOException, InterruptedException, URISyntaxException {
        return probe(List.of(JAR, SLF4J), jvmOptions);
    }

    private String probe(List<Path> classPath, String... jvmOptions)
            throws IOException, InterruptedException, URISyntaxException {
        Path source = Path.of(Objects.requireNonNull(
                OptionalDependenciesIT.class.getResource("/it/NoOptionalDependenciesProbe.java")).toURI());
        List<String> command = new ArrayList<>();
        command.addAll(ChildJvm.command());
        command.add("-cp");
        command.add(classPath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)));
        command.addAll(List.of(jvmOptions));
        command.add(source.toString());
        command.add(dir.toString());
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().remove("CLASSPATH");
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.environment().remove("OPENSSL_ia32cap");
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "probe did not finish");
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    /** The features that need no optional dependency work; the ones that do say what to add. */
    private static void assertOnlyOptionalFeaturesMissing(String out, String engine) {
        assertTrue(out.contains("gcm round trip on " + engine + ": ok"), out);
        assertTrue(out.contains("ctr round trip on " + engine + ": ok"), out);
        String accp = "Amazon Corretto Crypto Provider is not on the class path: add "
                + "software.amazon.cryptools:AmazonCorrettoCryptoProvider (" + property("sealpipe.it.accp.version")
                + ", classifier linux-x86_64)";
        assertTrue(out.contains(String.format("%-12s %-11s %s", "accp", "unavailable", accp)), out);
        assertTrue(out.contains("accp: accp is unavailable: " + accp), out);
        String jna = "JNA is not on the class path: add net.java.dev.jna:jna (" + property("sealpipe.it.jna.version") + ")";
        assertTrue(out.contains("openssl-jna  unavailable " + jna), out);
        assertTrue(out.contains("openssl-jna: openssl-jna is unavailable: " + jna), out);
        assertTrue(out.contains("snappy: SnappyStreams is unavailable: snappy-java is not on the class path: add "
                + "org.xerial.snappy:snappy-java (" + property("sealpipe.it.snappy.version") + ")"), out);
        assertTrue(out.contains("file created: false"), out);
    }

    @Test
    void autoWorksWithoutOptionalDependenciesAndLoadsTheNativeLibraryFromTheJar() throws Exception {
        String out = probe();
        assertTrue(out.contains("openssl-jni  available"), "the JNI library must load from the jar:\n" + out);
        String base = out.contains("AES-NI yes") ? "openssl-jni" : "jce";
        assertTrue(out.contains("base engine: " + base), out);
        // Streams name the engine of auto: one engine for everything, or "auto" when the
        // operations run on several (AVX-512 hosts: jce for CTR and GCM sealing).
        assertOnlyOptionalFeaturesMissing(out, out.contains("gcm round trip on auto") ? "auto" : base);
    }

    /**
     * Without SLF4J (a standalone application, or one that uses another logging API) everything
     * works as with it, and sealpipe's lines go to the JDK's {@code System.Logger}, with their
     * arguments in place.
     */
    @Test
    void worksWithoutSlf4jAndLogsThroughSystemLogger() throws Exception {
        String out = probe(List.of(JAR), JUL_FORMAT);
        assertTrue(out.contains("openssl-jni  available"), "the JNI library must load from the jar:\n" + out);
        String base = out.contains("AES-NI yes") ? "openssl-jni" : "jce";
        assertTrue(out.contains("base engine: " + base), out);
        assertOnlyOptionalFeaturesMissing(out, out.contains("gcm round trip on auto") ? "auto" : base);
        String engineLine = out.lines().filter(l -> l.startsWith(JUL_ENGINE_LINE)).findFirst()
                .orElseThrow(() -> new AssertionError("sealpipe's engine line through java.util.logging:\n" + out));
        assertTrue(engineLine.contains("operations: ") && !engineLine.contains("{}"), "formatted: " + engineLine);
    }

    /** With SLF4J on the class path, sealpipe logs through it, and not to java.util.logging as well. */
    @Test
    void logsThroughSlf4jWhenItIsThere() throws Exception {
        String out = probe(List.of(JAR, SLF4J, SLF4J_SIMPLE), JUL_FORMAT);
        assertTrue(out.contains("INFO io.sealpipe.engine.Engines - sealpipe engine "), "slf4j-simple's line:\n" + out);
        assertFalse(out.contains(JUL_ENGINE_LINE), "no java.util.logging line:\n" + out);
    }

    @Test
    void forcedJceWorksWithoutOptionalDependencies() throws Exception {
        String out = probe("-Dsealpipe.engine=jce");
        assertTrue(out.contains("Chosen:  jce: forced by sealpipe.engine=jce"), out);
        assertTrue(out.contains("base engine: jce"), out);
        assertOnlyOptionalFeaturesMissing(out, "jce");
    }
}
