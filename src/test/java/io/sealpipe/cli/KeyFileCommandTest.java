package io.sealpipe.cli;

import io.sealpipe.cli.CliRun.Result;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --key-file} takes the key as raw bytes or as hex text; {@code --key-hex}, whose key any
 * local user reads in {@code /proc/PID/cmdline}, still works but warns.
 */
class KeyFileCommandTest {
    private static final String KEY256 = "eff9a1c47d2b83e05a6f1c39b8d4720e61f5a3c9d0b7e2841f6c5a39d8e0b271";
    private static final String KEY128 = "2b7e151628aed2a6abf7158809cf4f3c";

    @TempDir
    Path dir;

    static Result run(String... args) {
        return CliRun.run(args);
    }

    private Path plain() throws IOException {
        byte[] plain = new byte[50_000];
        new Random(4).nextBytes(plain);
        return Files.write(dir.resolve("plain"), plain);
    }

    @Test
    void keyHexWarnsOnceAndKeyFileDoesNot() throws IOException {
        Path in = plain();
        Path out = dir.resolve("out");
        Result hex = run("encrypt", "--key-hex", KEY256, in.toString(), out.toString());
        assertEquals(0, hex.code(), hex.err());
        assertEquals(KeyHexWarning.LINE, hex.err().strip(), "one warning line");
        assertTrue(hex.err().contains("--key-file"), "suggests --key-file");

        Path keyFile = Files.write(dir.resolve("key"), HexFormat.of().parseHex(KEY256));
        Result file = run("decrypt", "--key-file", keyFile.toString(), out.toString(), dir.resolve("back").toString());
        assertEquals(0, file.code(), file.err());
        assertEquals("", file.err(), "no warning for --key-file");
        assertArrayEquals(Files.readAllBytes(in), Files.readAllBytes(dir.resolve("back")));

        // A bad command line gets its one error line, not the warning too.
        Result bad = run("encrypt", "--key-hex", KEY256, "--threads", "0", in.toString(), out.toString());
        assertEquals(2, bad.code());
        assertEquals(1, bad.err().strip().lines().count(), bad.err());
    }

    @Test
    void keyFileTakesRawBytesOrHexText() throws IOException {
        Path in = plain();
        for (String key : new String[] {KEY256, KEY128}) {
            String aes = key.length() == 64 ? "256" : "128";
            Path raw = Files.write(dir.resolve("raw-" + aes), HexFormat.of().parseHex(key));
            Path sealed = dir.resolve("sealed-" + aes);
            assertEquals(0, run("encrypt", "--aes", aes, "--key-file", raw.toString(), in.toString(),
                    sealed.toString()).code());
            String upper = key.toUpperCase(Locale.ROOT);
            String mixed = upper.substring(0, 10) + key.substring(10);
            for (String text : new String[] {key, key + "\n", key + "\r\n", upper, upper + "\n", mixed + "\r\n"}) {
                Path keyFile = Files.writeString(dir.resolve("hex-" + aes), text, StandardCharsets.US_ASCII);
                Path back = dir.resolve("back");
                Result r = run("decrypt", "--force", "--aes", aes, "--key-file", keyFile.toString(), sealed.toString(),
                        back.toString());
                assertEquals(0, r.code(), aes + " " + text.replace("\r", "\\r").replace("\n", "\\n") + ": " + r.err());
                assertArrayEquals(Files.readAllBytes(in), Files.readAllBytes(back));
            }
        }
        // Hex for a 16-byte key without --aes 128: the usual hint, from the decoded length.
        Path hex128 = Files.writeString(dir.resolve("hex128"), KEY128 + "\n");
        Result r = run("encrypt", "--key-file", hex128.toString(), in.toString(), dir.resolve("x").toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("the key is 16 bytes but --aes 256 needs 32 (--aes 256 is the default"), r.err());
    }

    @Test
    void anythingElseIsRefusedWithTheAcceptedLengthsAndNotTheContent() throws IOException {
        String in = plain().toString();
        String out = dir.resolve("out").toString();
        String[] contents = {
            "", KEY256.substring(0, 48), KEY256.substring(0, 63), KEY256 + "\n\n", KEY256 + " ", " " + KEY128,
            KEY256.substring(0, 31) + "g" + KEY256.substring(32), KEY256 + KEY256, "key = " + KEY128 + "\n",
        };
        for (String content : contents) {
            Path keyFile = Files.writeString(dir.resolve("key"), content, StandardCharsets.US_ASCII);
            Result r = run("encrypt", "--key-file", keyFile.toString(), in, out);
            String what = "'" + content.replace("\n", "\\n") + "'";
            assertEquals(2, r.code(), what + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
            assertTrue(r.err().contains("--key-file holds " + (content.length() > 66 ? "more than 66" : content.length())
                    + " bytes: it must hold the key as 16 or 32 raw bytes, or as 32 or 64 hex digits"), what + ": " + r.err());
            for (int i = 0; i + 6 <= content.strip().length(); i++) {
                String part = content.strip().substring(i, i + 6);
                assertFalse(r.err().contains(part), what + ": content '" + part + "' in: " + r.err());
            }
        }
        assertFalse(Files.exists(Path.of(out)));
    }
}
