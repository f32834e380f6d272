package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built jar in a project that depends on sealpipe alone: a child JVM whose class path is
 * only the jar and slf4j-api (no JNA, no snappy-java, no picocli) runs
 * {@code it/NoOptionalDependenciesProbe.java}. Each absent optional dependency must make only
 * its own feature unavailable, saying what to add; everything else must work, the native
 * library included; and the jar's manifest names its module. Run by maven-failsafe-plugin after
 * {@code package}, which passes the paths.
 */
class OptionalDependenciesIT {
    private static final Path JAR = Path.of(property("sealpipe.it.jar"));
    private static final Path SLF4J = Path.of(property("sealpipe.it.slf4j"));

    @TempDir
    Path dir;

    private static String property(String name) {
        return Objects.requireNonNull(System.getProperty(name), name + " is not set: run with mvn verify");
    }

    private String probe(String... jvmOptions) throws IOException, InterruptedException, URISyntaxException {
        Path source = Path.of(Objects.requireNonNull(
                OptionalDependenciesIT.class.getResource("/it/NoOptionalDependenciesProbe.java")).toURI());
        List<String> command = new ArrayList<>();
        command.addAll(ChildJvm.command());
        command.add("-cp");
        command.add(JAR + File.pathSeparator + SLF4J);
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
    void theJarNamesItsModule() throws IOException {
        try (JarFile jar = new JarFile(JAR.toFile())) {
            assertEquals("io.sealpipe", jar.getManifest().getMainAttributes().getValue("Automatic-Module-Name"));
        }
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

    @Test
    void forcedJceWorksWithoutOptionalDependencies() throws Exception {
        String out = probe("-Dsealpipe.engine=jce");
        assertTrue(out.contains("Chosen:  jce: forced by sealpipe.engine=jce"), out);
        assertTrue(out.contains("base engine: jce"), out);
        assertOnlyOptionalFeaturesMissing(out, "jce");
    }
}
