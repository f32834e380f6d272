package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
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
 * The runnable CLI jar ({@code target/sealpipe-<version>-cli.jar}) works on its own: copied to a
 * directory outside the project, {@code java -jar} runs {@code info --json} and a round trip of
 * {@code encrypt} and {@code decrypt}, with no other class path, and says what to add for a KMS
 * key ({@code --key-provider kms://...} needs Hadoop's client). Run by maven-failsafe-plugin
 * after {@code package}.
 */
class CliJarIT {
    private static final Path CLI_JAR = Path.of(Objects.requireNonNull(System.getProperty("sealpipe.it.cli.jar"),
            "sealpipe.it.cli.jar is not set: run with mvn verify"));

    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {}

    private Run java(Path jar, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(ChildJvm.command());
        command.add("-jar");
        command.add(jar.toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().remove("CLASSPATH");
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        Path out = dir.resolve("stdout");
        Path err = dir.resolve("stderr");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "java -jar did not finish");
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    @Test
    void runsFromADirectoryOutsideTheProject() throws Exception {
        Path jar = Files.copy(CLI_JAR, dir.resolve("sealpipe-cli.jar"));
        try (JarFile file = new JarFile(jar.toFile())) {
            assertEquals("io.sealpipe.cli.Main", file.getManifest().getMainAttributes().getValue("Main-Class"));
        }

        Run info = java(jar, "info", "--json");
        assertEquals(0, info.exit(), info.err());
        JsonNode json = new ObjectMapper().readTree(info.out());
        assertTrue(json.isObject() && json.size() > 0, info.out());
        assertTrue(info.out().contains("openssl-jni"), "the native engine is reported: " + info.out());

        byte[] plain = "a round trip through the CLI jar\n".repeat(1000).getBytes(StandardCharsets.UTF_8);
        Files.write(dir.resolve("plain.txt"), plain);
        Files.writeString(dir.resolve("key.hex"), "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
        Run encrypt = java(jar, "encrypt", "--key-file", "key.hex", "--compress", "snappy", "plain.txt", "sealed.bin");
        assertEquals(0, encrypt.exit(), encrypt.err());
        Run decrypt = java(jar, "decrypt", "--key-file", "key.hex", "--compress", "snappy", "sealed.bin", "back.txt");
        assertEquals(0, decrypt.exit(), decrypt.err());
        assertTrue(java.util.Arrays.equals(plain, Files.readAllBytes(dir.resolve("back.txt"))), "the round trip");

        // A KMS is read through Hadoop's client, which the jar does not hold: the error says what to add.
        Run kms = java(jar, "decrypt", "--key-provider", "kms://http@127.0.0.1:9600/kms", "--key-name", "data", "sealed.bin",
                "never.txt");
        assertEquals(2, kms.exit(), kms.err());
        assertTrue(kms.err().contains("Hadoop's client (hadoop-common 3.x and its dependencies) is not on the class path")
                && kms.err().contains("$(hadoop classpath)"), kms.err());
        assertTrue(!Files.exists(dir.resolve("never.txt")), "an output was made without a key");
    }
}
