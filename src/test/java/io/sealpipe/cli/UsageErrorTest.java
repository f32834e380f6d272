package io.sealpipe.cli;

import io.sealpipe.cli.CliRun.Result;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A mistyped command line never repeats a value in its error: picocli's own messages quoted every
 * argument ({@code Unmatched arguments from index 0: 'encrpyt', '--key-hex', '<the key>'}), so a
 * typo printed the key to the terminal and to every log that keeps it.
 */
class UsageErrorTest {
    private static final String KEY = "eff9a1c47d2b83e05a6f1c39b8d4720e61f5a3c9d0b7e2841f6c5a39d8e0b271";

    @TempDir
    Path dir;

    static Result run(String... args) {
        return CliRun.run(args);
    }

    /** No 6 consecutive characters of the key, anywhere in the output. */
    private static void assertNoPartOfTheKey(String text, String context) {
        for (int i = 0; i + 6 <= KEY.length(); i++) {
            String part = KEY.substring(i, i + 6);
            assertFalse(text.toLowerCase().contains(part), context + ": '" + part + "' of the key in: " + text);
        }
    }

    @Test
    void noErrorRepeatsTheKey() throws IOException {
        String in = Files.write(dir.resolve("plain"), new byte[10]).toString();
        String out = dir.resolve("out").toString();
        List<String[]> lines = new ArrayList<>(List.of(
                new String[] {"encrpyt", "--key-hex", KEY, in, out},                  // mistyped command
                new String[] {KEY},                                                      // the key alone
                new String[] {"encrypt", "--kye-hex", KEY, in, out},                   // mistyped option
                new String[] {"encrypt", "--kye-hex=" + KEY, in, out},
                new String[] {"encrypt", "-k" + KEY, in, out},
                new String[] {"encrypt", "--threads", "many", "--key-hex", KEY, in, out}, // bad value, then the key
                new String[] {"encrypt", "--compress", "zstd", "--key-hex", KEY, in, out},
                new String[] {"encrypt", "--aes", "--key-hex", KEY, in, out},           // missing value
                new String[] {"encrypt", "--key-hex", KEY, "--threads"},
                new String[] {"encrypt", "--threads", KEY, in, out},                   // the key in the wrong place
                new String[] {"encrypt", "--aes", KEY, in, out},
                new String[] {"decrypt", "--mode", KEY, in, out},
                new String[] {"decrypt", "--engine", KEY, "--key-file", in, in, out},
                new String[] {"decrypt", "--key-file", KEY, in, out},
                new String[] {"encrypt", "--key-hex", KEY, "--key-hex", KEY, in, out},   // given twice
                new String[] {"encrypt", "--key-hex", KEY, "--key-file", KEY, in, out},
                new String[] {"encrypt", "--key-hex", KEY, in, out, KEY},                // too many arguments
                new String[] {"encrypt", "--key-hex", "x" + KEY, in, out},               // not hex
                new String[] {"encrypt", "--key-hex", KEY, "--context-hex", KEY + "zz", in, out},
                new String[] {"encrypt", "--mode", "ctr", "--key-hex", KEY, "--iv-hex", KEY + "0", in, out},
                new String[] {"decrypt", "--key-hex", KEY, in, out + "\u0000" + KEY}, // a file name the system refuses
                new String[] {"speed", "--chart", "--key-hex=" + KEY},                 // a chart named like the key
                new String[] {"speed", "--chart", "/nonexistent/" + KEY + ".png"},       // in a folder that does not exist
                new String[] {"speed", "--chart", "/"},                                  // a root has no file name
                new String[] {"speed", "--engine", KEY},
                new String[] {"speed", "--mode", KEY}));
        for (String[] args : lines) {
            Result r = run(args);
            String context = String.join(" ", args);
            assertEquals(2, r.code(), context + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), context + ": one line: " + r.err());
            assertTrue(r.err().startsWith("sealpipe: "), r.err());
            assertNoPartOfTheKey(r.err(), context);
            assertNoPartOfTheKey(r.out(), context);
        }
        assertFalse(Files.exists(Path.of(out)), "no output after bad arguments");
    }

    @Test
    void linesNameTheOptionOrThePosition() {
        assertEquals("sealpipe: unknown command at argument 1 (did you mean encrypt or keygen or decrypt?): run 'sealpipe --help'"
                + " for the commands", run("encrpyt", "--key-hex", KEY).err().strip());
        assertEquals("sealpipe: unknown option at argument 3 (did you mean --key-hex or --key-file or --key-env or --keystore or --key-alias or --key-provider or --key-name or --key-mode?)"
                + " (see: sealpipe encrypt --help)",
                run("encrypt", "--aes=128", "--key-hx", KEY).err().strip());
        assertEquals("sealpipe: invalid value for --threads: expected a whole number (see: sealpipe encrypt --help)",
                run("encrypt", "--threads", KEY, "--key-hex", KEY).err().strip());
        assertEquals("sealpipe: invalid value for --mode: expected gcm, ctr (see: sealpipe decrypt --help)",
                run("decrypt", "--mode", "cbc", "--key-hex", KEY).err().strip());
        assertEquals("sealpipe: --aes needs a value (BITS) (see: sealpipe encrypt --help)",
                run("encrypt", "--aes", "--key-hex", KEY).err().strip());
        assertEquals("sealpipe: required: --key-hex or --key-file or --key-env or --keystore or --key-provider (see: sealpipe encrypt --help)",
                run("encrypt", "in", "out").err().strip());
        assertEquals("sealpipe: give only one of --key-hex or --key-file or --key-env or --keystore or --key-provider, once (see: sealpipe encrypt --help)",
                run("encrypt", "--key-hex", KEY, "--key-file", KEY).err().strip());
        assertEquals("sealpipe: too many arguments at argument 6 (see: sealpipe encrypt --help)",
                run("encrypt", "--key-hex", KEY, "in", "out", "extra").err().strip());
        assertEquals("sealpipe: unknown option at argument 2 (did you mean --json?) (see: sealpipe info --help)",
                run("info", "--jsn").err().strip());
        assertEquals("sealpipe: --engine accp has no ctr: use --mode gcm, or auto or openssl-jni, openssl-jna, jce"
                + " (see: sealpipe encrypt --help)",
                run("encrypt", "--mode", "ctr", "--engine", "accp", "--key-hex", KEY, "--iv-hex", "00".repeat(16), "in", "out")
                        .err().strip());
    }
}
