package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code --key-env VAR} with real environment values, in a child JVM (a test cannot set this
 * JVM's environment): hex only, so that a passphrase or a base64 key that happens to be 32
 * characters long never becomes a raw (weak) key; the value is never echoed.
 */
class KeyEnvCommandTest {
    private static final String VARIABLE = "SEALPIPE_TEST_KEY";

    @TempDir
    Path dir;

    private record Run(int code, String out, String err) {}

    private Run run(String value, String... args) throws IOException, InterruptedException {
        List<String> command = ChildJvm.command("-cp", System.getProperty("java.class.path"), Main.class.getName());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(dir.resolve("stdout").toFile())
                .redirectError(dir.resolve("stderr").toFile());
        builder.environment().put(VARIABLE, value);
        Process process = builder.start();
        process.getOutputStream().close();
        if (!process.waitFor(2, java.util.concurrent.TimeUnit.MINUTES)) { // a safety net: the CLI takes about a second
            process.destroyForcibly();
            throw new AssertionError("the CLI did not finish: " + Files.readString(dir.resolve("stderr")));
        }
        int code = process.exitValue();
        return new Run(code, Files.readString(dir.resolve("stdout")), Files.readString(dir.resolve("stderr")));
    }

    /** 32 and 40 characters that are not hex: a passphrase, a base64 key, hex with one typo. */
    @ParameterizedTest
    @ValueSource(strings = {"correct horse battery staple 123", "c29tZSAzMi1ieXRlIGtleSBpbiBiYXNlNjQgISE=",
            "00112233445566778899aabbccddeefg"})
    void aValueThatIsNotHexIsAUsageErrorAndNeverEchoed(String value) throws Exception {
        Path in = dir.resolve("plain");
        Files.writeString(in, "secret data");
        Path out = dir.resolve("out");

        Run r = run(value, "encrypt", "--key-env", VARIABLE, in.toString(), out.toString());

        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--key-env " + VARIABLE + " must hold the key as 32 or 64 hex digits"), r.err());
        assertTrue(r.err().contains(value.length() + " characters"), r.err());
        assertFalse((r.out() + r.err()).contains(value), "the value was echoed: " + r.err());
        assertFalse(Files.exists(out), "no output after a key error");
    }

    @Test
    void hexKeysOfBothSizesWork() throws Exception {
        byte[] plain = "secret data".getBytes(StandardCharsets.UTF_8);
        Path in = dir.resolve("plain");
        Files.write(in, plain);
        for (String hex : new String[] {"00112233445566778899aabbccddeeff",
                "  00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff\n"}) {
            Path out = dir.resolve("out");
            Path back = dir.resolve("back");
            Files.deleteIfExists(out);
            Files.deleteIfExists(back);
            String aes = hex.strip().length() == 32 ? "128" : "256";
            Run encrypted = run(hex, "encrypt", "--aes", aes, "--key-env", VARIABLE, in.toString(), out.toString());
            assertEquals(0, encrypted.code(), encrypted.err());
            Run decrypted = run("unused", "decrypt", "--aes", aes, "--key-hex", hex.strip(), out.toString(), back.toString());
            assertEquals(0, decrypted.code(), decrypted.err());
            assertArrayEquals(plain, Files.readAllBytes(back));
        }
    }

    @Test
    void theBase64OfAValidKeyIsRefusedToo() throws Exception {
        byte[] key = HexFormat.of().parseHex("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
        Path in = dir.resolve("plain");
        Files.writeString(in, "x");
        Run r = run(Base64.getEncoder().encodeToString(key), "encrypt", "--key-env", VARIABLE, in.toString(),
                dir.resolve("out").toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("hex digits"), r.err());
    }
}
