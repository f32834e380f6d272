package io.sealpipe.cli;

import io.sealpipe.cli.CliRun.Result;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code encrypt x x} used to replace the plaintext by its ciphertext with exit 0 (and {@code
 * decrypt x x} the reverse): IN = OUT, however spelled, is refused with exit 2 and the file is
 * left as it was.
 */
class SameFileCommandTest {
    private static final String KEY = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";

    @TempDir
    Path dir;

    static Result run(String... args) {
        return CliRun.run(args);
    }

    @Test
    void encryptAndDecryptRefuseInAsOut() throws IOException {
        byte[] plain = new byte[100_000];
        new Random(1).nextBytes(plain);
        Path x = Files.write(dir.resolve("x.bin"), plain);
        Path sealed = dir.resolve("x.sealed");
        assertEquals(0, run("encrypt", "--key-hex", KEY, x.toString(), sealed.toString()).code());
        Path hardLink = Files.createLink(dir.resolve("hard"), x);
        Path symlink = Files.createSymbolicLink(dir.resolve("sym"), x);
        Path relative = Path.of("").toAbsolutePath().relativize(x);
        List<String> spellings = List.of(x.toString(), dir + "/./x.bin", dir.resolve("sub/../x.bin").toString(),
                relative.toString(), hardLink.toString(), symlink.toString());
        Files.createDirectory(dir.resolve("sub"));
        FileTime before = Files.getLastModifiedTime(x);
        for (String out : spellings) {
            assertRefused(run("encrypt", "--key-hex", KEY, x.toString(), out), "encrypt x " + out);
            assertRefused(run("encrypt", "--key-hex", KEY, out, x.toString()), "encrypt " + out + " x");
            assertArrayEquals(plain, Files.readAllBytes(x), "the plaintext is untouched");
        }
        assertEquals(before, Files.getLastModifiedTime(x));

        byte[] ciphertext = Files.readAllBytes(sealed);
        Path sealedLink = Files.createSymbolicLink(dir.resolve("sealed-link"), sealed);
        for (String out : List.of(sealed.toString(), dir + "/./x.sealed", sealedLink.toString())) {
            assertRefused(run("decrypt", "--key-hex", KEY, sealed.toString(), out), "decrypt x " + out);
            assertArrayEquals(ciphertext, Files.readAllBytes(sealed), "the ciphertext is untouched");
        }
        try (var files = Files.list(dir)) {
            assertTrue(files.noneMatch(f -> f.getFileName().toString().endsWith(".tmp")), "temporary files left behind");
        }
        // Distinct files still work, and a missing OUT is no reason to refuse.
        Path back = dir.resolve("back.bin");
        assertEquals(0, run("decrypt", "--key-hex", KEY, sealed.toString(), back.toString()).code());
        assertArrayEquals(plain, Files.readAllBytes(back));
    }

    private static void assertRefused(Result r, String what) {
        assertEquals(2, r.code(), what + ": " + r.err());
        assertTrue(r.err().contains("IN and OUT are the same file"), what + ": " + r.err());
        assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
    }
}
