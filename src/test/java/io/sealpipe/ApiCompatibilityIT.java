package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API check of pom.xml (the japicmp execution {@code api-compat}, after the step {@code
 * api-baseline} that decides whether there is a baseline, as {@code mvn verify} runs them) does
 * what docs/contributing.md says, on the jar just built: against a baseline that has a public
 * method this jar lacks, it fails the build and names the method; against a baseline equal to
 * this jar it passes; a method missing only in {@code io.sealpipe.internal} does not count; with
 * no baseline it says it skipped.
 *
 * <p>Each baseline is this jar, or this jar with one class recompiled from its source with one
 * more public method, put as the version before this one in its major line (0.0.99 before 0.1.0,
 * 1.2.0 before 1.2.1: {@link #earlierInTheSameMajorLine}) into a local repository of this
 * test: its folder {@code io/sealpipe/sealpipe} is the test's own (the baseline, and this jar as
 * this version), everything else links to the build's local repository. So a child {@code mvn}
 * resolves the plugins and the dependencies as the build does and finds the baseline where a
 * release would be, and the build's repository gets no such version. The child runs this
 * project's pom.xml: the configuration under test is the one a release builds with. The step
 * from the baseline to this version is a minor or a patch step, which allows no incompatible
 * change.
 */
class ApiCompatibilityIT {
    private static final Path JAR = property("sealpipe.it.jar");
    private static final Path POM = property("sealpipe.it.pom");
    private static final Path SOURCES = property("sealpipe.it.sources");
    private static final Path MAVEN_HOME = property("sealpipe.it.maven.home");
    private static final Path LOCAL_REPOSITORY = property("sealpipe.it.local.repository");
    private static final String VERSION = Objects.requireNonNull(System.getProperty("sealpipe.it.version"));
    private static final boolean OFFLINE = "offline=true".equals(System.getProperty("sealpipe.it.offline"));
    private static final String BASELINE = earlierInTheSameMajorLine(VERSION);
    private static final String PROBE = "removedInTheNextVersion";

    @TempDir
    Path dir;

    private static Path property(String name) {
        return Path.of(Objects.requireNonNull(System.getProperty(name), name + " is not set: run with mvn verify"));
    }

    private record Run(int exit, String log) {}

    @Test
    void aRemovedPublicMethodFailsTheBuildAndIsNamed() throws Exception {
        installBaseline(withExtraMethod("io/sealpipe/Parallelism.java"));
        Run run = check(BASELINE);
        assertNotEquals(0, run.exit(), "the build passed without io.sealpipe.Parallelism." + PROBE + "():\n" + run.log());
        assertTrue(run.log().contains("BUILD FAILURE"), run.log());
        assertTrue(run.log().contains("Versions of archives indicate a minor change but binary incompatible changes found"),
                run.log());
        // japicmp names each change that needs a major step, and the failure points to its report.
        assertTrue(run.log().lines().anyMatch(l -> l.contains("Incompatibility detected") && l.contains(PROBE)),
                "no line names the removed method:\n" + run.log());
        String diff = Files.readString(POM.resolveSibling("target/japicmp/api-compat.diff"));
        assertTrue(diff.contains("REMOVED") && diff.contains(PROBE) && diff.contains("io.sealpipe.Parallelism"), diff);
    }

    @Test
    void aBaselineEqualToThisJarPasses() throws Exception {
        installBaseline(JAR);
        Run run = check(BASELINE);
        assertEquals(0, run.exit(), run.log());
        assertCompared(run);
    }

    @Test
    void aMethodMissingOnlyInTheInternalPackageDoesNotCount() throws Exception {
        installBaseline(withExtraMethod("io/sealpipe/internal/CtrMath.java"));
        Run run = check(BASELINE);
        assertEquals(0, run.exit(), run.log());
        assertCompared(run);
        assertFalse(run.log().contains(PROBE), run.log());
    }

    @Test
    void withoutABaselineTheCheckSaysItIsSkipped() throws Exception {
        Run run = check("");
        assertEquals(0, run.exit(), run.log());
        assertTrue(run.log().contains("API check skipped: sealpipe.api.baseline is empty"), run.log());
        assertTrue(run.log().contains("japicmp skipped."), run.log());
    }

    /** The check ran on both jars: no skip, and its report compares the baseline with this jar. */
    private void assertCompared(Run run) throws IOException {
        assertFalse(run.log().contains("skipped"), run.log());
        String diff = Files.readString(POM.resolveSibling("target/japicmp/api-compat.diff"));
        assertTrue(diff.contains("sealpipe-" + BASELINE + ".jar") && diff.contains(JAR.getFileName().toString()), diff);
        assertTrue(run.log().contains("Written file") && run.log().contains("api-compat.diff"), run.log());
    }

    /** The two steps of verify, on this project's pom, with the test's local repository. */
    private Run check(String baseline) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(MAVEN_HOME.resolve("bin/mvn").toString(), "-B", "-ntp",
                "-Dstyle.color=never", "-f", POM.toString(), "-Dmaven.repo.local=" + repository(),
                "-Dsealpipe.api.baseline=" + baseline, "antrun:run@api-baseline", "japicmp:cmp@api-compat"));
        // Offline when the build is: otherwise, on a fresh machine, this runs before the build's
        // verify phase has fetched the plugins' dependencies, and fetches them itself (through the
        // links, into the build's repository).
        if (OFFLINE) {
            command.add(1, "-o");
        }
        ProcessBuilder pb = new ProcessBuilder(command).directory(POM.getParent().toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().remove("MAVEN_ARGS");
        // A short run: the C1 compiler alone and the serial collector halve Maven's CPU time here
        // (about 3 s of CPU a run, not 6).
        // Added to the caller's MAVEN_OPTS, which may hold what Maven needs to reach a repository
        // (a proxy).
        String opts = System.getenv("MAVEN_OPTS");
        pb.environment().put("MAVEN_OPTS", (opts == null || opts.isBlank() ? "" : opts + " ")
                + "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
        // The report of an earlier run must not stand in for this one's.
        Files.deleteIfExists(POM.resolveSibling("target/japicmp/api-compat.diff"));
        Path log = dir.resolve("mvn-" + System.nanoTime() + ".log");
        pb.redirectErrorStream(true).redirectOutput(log.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        // A guard against a hung child only; the run takes seconds.
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("mvn did not finish in 10 minutes: " + Files.readString(log));
        }
        return new Run(p.exitValue(), Files.readString(log));
    }

    /**
     * A version before {@code version} whose step to it is not a major one: the patch before it,
     * else the minor before it (0.0.99 before 0.1.0). An X.0.0 has none: a removal is allowed
     * there, and this test must then be given its baseline by hand.
     */
    static String earlierInTheSameMajorLine(String version) {
        String[] p = version.replace("-SNAPSHOT", "").split("\\.");
        int major = Integer.parseInt(p[0]);
        int minor = Integer.parseInt(p[1]);
        int patch = p.length > 2 ? Integer.parseInt(p[2]) : 0;
        if (patch > 0) {
            return major + "." + minor + "." + (patch - 1);
        }
        if (minor > 0) {
            return major + "." + (minor - 1) + ".99";
        }
        throw new IllegalStateException(version + " is the first of its major line: no earlier version of the same"
                + " line can be the baseline, and from another line a removal is allowed; give the test one by hand");
    }

    /**
     * The jar just built with {@code source}'s class recompiled with one more public method,
     * {@value #PROBE}.
     */
    private Path withExtraMethod(String source) throws IOException {
        String text = Files.readString(SOURCES.resolve(source));
        int end = text.lastIndexOf('}');
        String changed = text.substring(0, end) + "    public static int " + PROBE + "() { return 1; }\n}\n";
        Path src = dir.resolve("src").resolve(source);
        Files.createDirectories(src.getParent());
        Files.writeString(src, changed);
        Path classes = Files.createDirectories(dir.resolve("classes"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int rc = javac.run(null, null, null, "--release", "17", "-proc:none", "-nowarn", "-cp", JAR.toString(), "-d",
                classes.toString(), src.toString());
        assertEquals(0, rc, "javac " + src);
        Map<String, Path> replaced = new HashMap<>();
        try (Stream<Path> files = Files.walk(classes)) {
            files.filter(Files::isRegularFile)
                    .forEach(f -> replaced.put(classes.relativize(f).toString().replace('\\', '/'), f));
        }
        String top = source.replace(".java", ".class");
        assertTrue(replaced.containsKey(top), "javac wrote " + replaced.keySet());
        Path jar = dir.resolve("baseline.jar");
        try (JarFile in = new JarFile(JAR.toFile()); OutputStream file = Files.newOutputStream(jar);
                JarOutputStream out = new JarOutputStream(file)) {
            for (Enumeration<JarEntry> e = in.entries(); e.hasMoreElements();) {
                JarEntry entry = e.nextElement();
                out.putNextEntry(new JarEntry(entry.getName()));
                Path replacement = replaced.remove(entry.getName());
                if (replacement != null) {
                    Files.copy(replacement, out);
                } else {
                    try (InputStream data = in.getInputStream(entry)) {
                        data.transferTo(out);
                    }
                }
                out.closeEntry();
            }
        }
        assertTrue(replaced.isEmpty(), "classes not in the jar: " + replaced.keySet());
        return jar;
    }

    /**
     * The test's local repository: {@code io/sealpipe/sealpipe} is its own, with only this jar as
     * this version; every other entry links to the build's local repository.
     */
    private Path repository() throws IOException {
        Path repository = dir.resolve("repository");
        if (Files.isDirectory(repository)) {
            return repository;
        }
        Path real = LOCAL_REPOSITORY;
        Path at = Files.createDirectories(repository);
        for (Path part : Path.of("io/sealpipe/sealpipe")) {
            if (Files.isDirectory(real)) {
                try (Stream<Path> entries = Files.list(real)) {
                    for (Path entry : (Iterable<Path>) entries::iterator) {
                        if (!entry.getFileName().equals(part)) {
                            Files.createSymbolicLink(at.resolve(entry.getFileName().toString()), entry);
                        }
                    }
                }
            }
            real = real.resolve(part.toString());
            at = Files.createDirectories(at.resolve(part.toString()));
        }
        // japicmp puts the project's own artifact on its class path, and a run of its goal alone
        // (no package before it) takes it from the local repository.
        install(JAR, VERSION);
        return repository;
    }

    /** Puts {@code jar} into the test's local repository as version {@value #BASELINE}. */
    private void installBaseline(Path jar) throws IOException {
        install(jar, BASELINE);
    }

    /** Puts {@code jar} into the test's local repository as {@code version}, with a pom, as an install would. */
    private void install(Path jar, String version) throws IOException {
        Path folder = Files.createDirectories(repository().resolve("io/sealpipe/sealpipe").resolve(version));
        Files.copy(jar, folder.resolve("sealpipe-" + version + ".jar"));
        Files.writeString(folder.resolve("sealpipe-" + version + ".pom"),
                "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  <modelVersion>4.0.0</modelVersion>\n"
                        + "  <groupId>io.sealpipe</groupId>\n  <artifactId>sealpipe</artifactId>\n  <version>" + version
                        + "</version>\n</project>\n",
                StandardCharsets.UTF_8);
    }
}
