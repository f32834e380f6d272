package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI archive ({@code target/sealpipe-<version>-linux-x86_64.tar.gz}) runs on a machine with
 * only a JDK: unpacked into an empty directory, {@code bin/sealpipe} (directly and through a
 * symbolic link) runs {@code --version}, {@code info}, {@code keygen}, an {@code encrypt} and
 * {@code decrypt} round trip and a short {@code speed}, with an empty HOME (and {@code user.home},
 * which Java takes from the password database, not from HOME) and a PATH of the JDK's bin and a
 * directory with only the five tools the launcher uses (no Maven, no git); no other environment
 * variable. A JDK older than 17 is refused; an early-access one runs. The SBOMs list exactly
 * what is shipped. Run by maven-failsafe-plugin after {@code package}.
 */
class CliArchiveIT {
    private static final String VERSION = Objects.requireNonNull(System.getProperty("sealpipe.it.version"),
            "sealpipe.it.version is not set: run with mvn verify");
    private static final Path TARGET = Path.of(Objects.requireNonNull(System.getProperty("sealpipe.it.target"),
            "sealpipe.it.target is not set: run with mvn verify"));
    private static final String PLATFORM = "linux-x86_64";

    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {}

    private Run run(Path home, Path launcher, String... args) throws IOException, InterruptedException {
        return run(home, launcher, Map.of(), args);
    }

    private Run run(Path home, Path launcher, Map<String, String> extraEnv, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(launcher.toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        Map<String, String> env = pb.environment();
        String javaHome = System.getProperty("java.home");
        env.clear();
        env.put("HOME", home.toString());
        env.put("PATH", javaHome + "/bin:" + tools());
        env.put("JAVA_HOME", javaHome);
        env.put("SEALPIPE_JAVA_OPTS", "-Duser.home=" + home);
        env.putAll(extraEnv);
        Path out = dir.resolve("stdout");
        Path err = dir.resolve("stderr");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        assertTrue(p.waitFor(180, TimeUnit.SECONDS), "bin/sealpipe " + String.join(" ", args) + " did not finish");
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** A directory with only what bin/sealpipe runs besides java: no mvn, no git on the PATH. */
    private Path tools() throws IOException {
        Path tools = dir.resolve("tools");
        if (!Files.isDirectory(tools)) {
            Files.createDirectories(tools);
            for (String tool : List.of("readlink", "dirname", "sed", "head", "cut")) {
                Path found = Stream.of("/usr/bin", "/bin").map(d -> Path.of(d, tool)).filter(Files::isExecutable)
                        .findFirst().orElseThrow(() -> new IllegalStateException(tool + " is in neither /usr/bin nor /bin"));
                Files.createSymbolicLink(tools.resolve(tool), found);
            }
        }
        return tools;
    }

    private Path unpack(Path archive, Path into) throws IOException, InterruptedException {
        Files.createDirectories(into);
        Process tar = new ProcessBuilder("tar", "xzf", archive.toString(), "-C", into.toString()).inheritIO().start();
        assertEquals(0, tar.waitFor(), "tar xzf " + archive);
        return into.resolve("sealpipe-" + VERSION);
    }

    @Test
    void runsFromAnEmptyDirectoryWithOnlyAJdk() throws Exception {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path root = unpack(TARGET.resolve("sealpipe-" + VERSION + "-" + PLATFORM + ".tar.gz"), dir.resolve("unpacked"));
        Path launcher = root.resolve("bin/sealpipe");
        assertTrue(Files.isExecutable(launcher), "bin/sealpipe is executable");

        Run version = run(home, launcher, "--version");
        assertEquals(0, version.exit(), version.err());
        String commit = Files.readString(TARGET.resolve("generated-resources/sealpipe/io/sealpipe/cli/commit.txt")).trim();
        assertTrue(version.out().startsWith("sealpipe " + VERSION + "\n"), version.out());
        assertTrue(version.out().contains("\ncommit " + commit + "\n"), version.out());
        assertTrue(commit.matches("[0-9a-f]{40}(-dirty)?|unknown"), commit);
        String nativeLine = version.out().lines().filter(l -> l.startsWith("native ")).findFirst().orElse("");
        assertTrue(nativeLine.matches("native linux-x86_64: libsealpipe from the jar, built by zig \\S+ for"
                + " x86_64-linux-gnu\\.2\\.17, sha256 [0-9a-f]{64}"), version.out());
        assertTrue(nativeLine.endsWith(sha256(Files.readAllBytes(
                TARGET.resolve("classes/META-INF/native/linux-x86_64/libsealpipe.so")))), "the hash of the library built");

        Run info = run(home, launcher, "info", "--json");
        assertEquals(0, info.exit(), info.err());
        JsonNode json = new ObjectMapper().readTree(info.out());
        assertEquals("openssl-jni", json.path("engine").asText(), info.out());
        assertTrue(json.path("engines").path("openssl-jni").path("available").asBoolean(), info.out());

        Run keygen = run(home, launcher, "keygen", "--out", "key.hex");
        assertEquals(0, keygen.exit(), keygen.err());
        byte[] plain = new byte[300_000];
        new Random(45).nextBytes(plain);
        Files.write(dir.resolve("plain.bin"), plain);
        Run encrypt = run(home, launcher, "encrypt", "--key-file", "key.hex", "plain.bin", "sealed.bin");
        assertEquals(0, encrypt.exit(), encrypt.err());
        // Through a symbolic link to bin/sealpipe, from another directory, as from a PATH.
        Path link = Files.createSymbolicLink(Files.createDirectories(dir.resolve("path-bin")).resolve("sealpipe"), launcher);
        Run decrypt = run(home, link, "decrypt", "--key-file", "key.hex", "sealed.bin", "back.bin");
        assertEquals(0, decrypt.exit(), decrypt.err());
        assertTrue(java.util.Arrays.equals(plain, Files.readAllBytes(dir.resolve("back.bin"))), "the round trip");

        Run speed = run(home, link, "speed", "--mode", "gcm-stream", "--engine", "openssl-jni", "--seconds", "0.1", "--json");
        assertEquals(0, speed.exit(), speed.err());
        assertTrue(new ObjectMapper().readTree(speed.out()).toString().contains("mb_per_s"), speed.out());

        try (Stream<Path> left = Files.walk(home)) {
            List<Path> m2 = left.filter(p -> p.getFileName().toString().equals(".m2")).toList();
            assertTrue(m2.isEmpty(), "a Maven repository appeared in HOME: " + m2);
        }
    }

    /** bin/sealpipe reads the JDK's version (its release file): older than 17 is refused, early access runs. */
    @Test
    void refusesAJdkOlderThan17AndRunsAnEarlyAccessOne() throws Exception {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path root = unpack(TARGET.resolve("sealpipe-" + VERSION + "-" + PLATFORM + ".tar.gz"), dir.resolve("unpacked"));
        Path launcher = root.resolve("bin/sealpipe");
        Path realJava = Path.of(System.getProperty("java.home"), "bin", "java");

        Path old = fakeJdk("jdk-11", "11.0.2", realJava);
        Run refused = run(home, launcher, Map.of("JAVA_HOME", old.toString()), "--version");
        assertEquals(2, refused.exit(), refused.out() + refused.err());
        assertTrue(refused.err().contains("is Java 11.0.2; sealpipe needs Java 17 or later"), refused.err());

        Path ea = fakeJdk("jdk-25-ea", "25-ea", realJava);
        Run runs = run(home, launcher, Map.of("JAVA_HOME", ea.toString()), "--version");
        assertEquals(0, runs.exit(), runs.err());
        assertTrue(runs.out().startsWith("sealpipe " + VERSION + "\n"), runs.out());
    }

    /** A JDK directory whose release file says {@code version}, and whose bin/java is {@code java}. */
    private Path fakeJdk(String name, String version, Path java) throws IOException {
        Path jdk = Files.createDirectories(dir.resolve(name).resolve("bin")).getParent();
        Files.createSymbolicLink(jdk.resolve("bin/java"), java);
        Files.writeString(jdk.resolve("release"), "JAVA_VERSION=\"" + version + "\"\n");
        return jdk;
    }

    /** Every jar of each archive's lib/ is a component of its SBOM, with its hash, and nothing else is. */
    @Test
    void sbomsListExactlyWhatIsShipped() throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        for (String platform : List.of("linux-x86_64", "linux-aarch64")) {
            Path root = unpack(TARGET.resolve("sealpipe-" + VERSION + "-" + platform + ".tar.gz"), dir.resolve(platform));
            Map<String, String> shipped = new TreeMap<>();
            try (Stream<Path> jars = Files.list(root.resolve("lib"))) {
                for (Path jar : jars.toList()) {
                    shipped.put(jar.getFileName().toString(), sha256(Files.readAllBytes(jar)));
                }
            }
            JsonNode bom = mapper.readTree(TARGET.resolve("sealpipe-" + VERSION + "-" + platform + "-cyclonedx.json").toFile());
            assertEquals("CycloneDX", bom.get("bomFormat").asText());
            assertEquals("pkg:maven/io.sealpipe/sealpipe@" + VERSION + "?classifier=" + platform + "&type=tar.gz",
                    bom.at("/metadata/component/purl").asText());
            Map<String, String> listed = new TreeMap<>();
            for (JsonNode c : bom.get("components")) {
                String classifier = c.get("purl").asText().replaceFirst(".*classifier=([^&]*).*|.*", "$1");
                String file = c.get("name").asText() + "-" + c.get("version").asText()
                        + (classifier.isEmpty() ? "" : "-" + classifier) + ".jar";
                assertEquals("required", c.get("scope").asText(), file);
                assertTrue(c.get("licenses").size() > 0, "a licence for " + file);
                String sha = "";
                for (JsonNode h : c.get("hashes")) {
                    if (h.get("alg").asText().equals("SHA-256")) {
                        sha = h.get("content").asText();
                    }
                }
                listed.put(file, sha);
            }
            assertEquals(shipped, listed, platform + ": the jars in lib/ (name and SHA-256) and the SBOM's components");
            String thirdParty = Files.readString(root.resolve("licenses/THIRD-PARTY.txt"));
            for (String jar : shipped.keySet()) {
                assertTrue(jar.startsWith("sealpipe-") || thirdParty.contains(jar), jar + " in THIRD-PARTY.txt");
            }
        }

        JsonNode library = mapper.readTree(TARGET.resolve("sealpipe-" + VERSION + "-cyclonedx.json").toFile());
        assertEquals("sealpipe", library.at("/metadata/component/name").asText());
        assertEquals(VERSION, library.at("/metadata/component/version").asText());
        assertEquals("pkg:maven/io.sealpipe/sealpipe@" + VERSION + "?type=jar", library.at("/metadata/component/purl").asText());
        List<String> names = new ArrayList<>();
        for (JsonNode c : library.get("components")) {
            assertEquals("optional", c.get("scope").asText(), c.get("purl").asText());
            names.add(c.get("name").asText());
        }
        for (String expected : List.of("jna", "snappy-java", "AmazonCorrettoCryptoProvider", "slf4j-api", "picocli", "commons-crypto", "kms")) {
            assertTrue(names.contains(expected), expected + " in the library's SBOM: " + names);
        }
        for (String notShipped : List.of("hadoop-common", "junit-jupiter", "jazzer-junit")) {
            assertFalse(names.contains(notShipped), notShipped + " is not a dependency a user gets: " + names);
        }
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
