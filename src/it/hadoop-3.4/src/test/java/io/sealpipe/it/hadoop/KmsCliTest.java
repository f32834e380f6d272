package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.junit.jupiter.api.Test;

/**
 * The CLI with its key in Hadoop's KMS server: {@code sealpipe encrypt}, {@code decrypt} and
 * {@code inspect} with {@code --key-provider kms://http@127.0.0.1:PORT/kms --key-name data}, each
 * run as a user would, in a JVM of its own: the CLI jar the build just made ahead of Hadoop's
 * client (this project's class path without sealpipe's library jar, as {@code $(hadoop
 * classpath)} would give it). The file it writes is sealed under the KMS's current version of the
 * key (decrypted here with that version's material from the KMS), reads back, and names the
 * version; a key the KMS does not have, and a KMS that is down, fail with exit 1 and say why.
 */
class KmsCliTest {
    private static final Path CLI_JAR = Path.of(Objects.requireNonNull(System.getProperty("sealpipe.it.cli.jar"),
            "sealpipe.it.cli.jar is not set: run with mvn verify"));

    private record Run(int exit, String out, String err) {}

    /** The CLI in a JVM of its own, in {@code dir}, with Hadoop's client behind the CLI jar. */
    private static Run cli(Path dir, String... args) throws IOException, InterruptedException {
        String testClassPath = Objects.requireNonNull(System.getProperty("surefire.test.class.path"),
                "surefire.test.class.path is not set");
        String hadoop = Arrays.stream(testClassPath.split(File.pathSeparator))
                .filter(entry -> !Path.of(entry).getFileName().toString().startsWith("sealpipe-"))
                .filter(entry -> !entry.endsWith("test-classes"))
                .collect(Collectors.joining(File.pathSeparator));
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", CLI_JAR + File.pathSeparator + hadoop, "io.sealpipe.cli.Main"));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().remove("CLASSPATH");
        Path out = Files.createTempFile(dir, "stdout", ".txt");
        Path err = Files.createTempFile(dir, "stderr", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the CLI did not finish");
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    @Test
    void encryptsDecryptsAndInspectsWithAKeyFromTheKms() throws Exception {
        Path dir = Path.of("target", "kms-cli").toAbsolutePath();
        TestFiles.deleteRecursively(dir);
        Files.createDirectories(dir);
        byte[] plain = "a row of a table, sealed by the CLI under a KMS key\n".repeat(5000).getBytes(StandardCharsets.UTF_8);
        Files.write(dir.resolve("plain.txt"), plain);

        Kms kms = Kms.start(Kms.dir("cli"));
        try {
            kms.createKey("data", 256);
            KeyProvider provider = kms.client();
            byte[] current;
            try {
                provider.rollNewVersion("data");
                current = provider.getCurrentKey("data").getMaterial();
            } finally {
                provider.close();
            }
            String[] key = {"--key-provider", kms.uri().toString(), "--key-name", "data"};

            Run encrypt = cli(dir, concat(new String[] {"encrypt"}, key, "plain.txt", "sealed.bin"));
            assertEquals(0, encrypt.exit(), encrypt.err());
            // Sealed under the KMS's current version: its material, read from the KMS, decrypts it.
            GcmStreams streams = GcmStreams.builder().key(current).build();
            try (InputStream in = streams.decrypt(Files.newInputStream(dir.resolve("sealed.bin")))) {
                assertArrayEquals(plain, in.readAllBytes(), "the file under the KMS's current version");
            } finally {
                streams.destroy();
                Arrays.fill(current, (byte) 0);
            }

            Run decrypt = cli(dir, concat(new String[] {"decrypt"}, key, "sealed.bin", "back.txt"));
            assertEquals(0, decrypt.exit(), decrypt.err());
            assertArrayEquals(plain, Files.readAllBytes(dir.resolve("back.txt")));

            Run inspect = cli(dir, concat(new String[] {"inspect", "--json"}, key, "sealed.bin"));
            assertEquals(0, inspect.exit(), inspect.err());
            assertTrue(inspect.out().contains("\"key_version\":\"data@1\"") || inspect.out().contains("\"key_version\" : \"data@1\""),
                    inspect.out());

            Run missing = cli(dir, "decrypt", "--key-provider", kms.uri().toString(), "--key-name", "nosuchkey",
                    "sealed.bin", "never.txt");
            assertEquals(1, missing.exit(), missing.err());
            assertTrue(missing.err().contains("the --key-provider has no version of the --key-name key"), missing.err());
            assertFalse(Files.exists(dir.resolve("never.txt")));

            kms.stop();
            Run down = cli(dir, concat(new String[] {"decrypt"}, key, "sealed.bin", "never.txt"));
            assertEquals(1, down.exit(), down.err());
            assertTrue(down.err().contains("cannot read the --key-name key from the --key-provider")
                    && down.err().contains("Failed to connect") && down.err().contains("is the provider reachable"), down.err());
            assertFalse(down.err().contains("\tat org.apache.hadoop"), "Hadoop's stack traces on the console: " + down.err());
            assertFalse(Files.exists(dir.resolve("never.txt")));
        } finally {
            kms.stop();
        }
    }

    private static String[] concat(String[] first, String[] key, String... rest) {
        List<String> all = new ArrayList<>(List.of(first));
        all.addAll(List.of(key));
        all.addAll(List.of(rest));
        return all.toArray(new String[0]);
    }
}
