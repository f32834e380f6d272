package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import io.sealpipe.cli.CliRun.Result;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.TextLikeData;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.xerial.snappy.SnappyFramedInputStream;

/**
 * {@code --compress snappy} and {@code --threads N} on encrypt and decrypt, and decrypt's refusal
 * of a compressed plaintext without {@code --compress} (unless {@code --raw}).
 */
class CompressCommandTest {
    private static final String KEY = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
    private static final String IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
    private static final byte[] PLAIN = TextLikeData.generate(5, 3 << 20);

    @TempDir
    Path dir;

    static Result run(String... args) {
        return CliRun.run(args);
    }

    private Path plainFile() throws IOException {
        return Files.write(dir.resolve("plain.txt"), PLAIN);
    }

    @ParameterizedTest(name = "--threads {0}")
    @ValueSource(strings = {"1", "2", "4"})
    void gcmRoundTripCompressesAndAnyFramedReaderDecodes(String threads) throws IOException {
        Path sealed = dir.resolve("out.sealed");
        Path back = dir.resolve("back.txt");
        assertEquals(0, run("encrypt", "--key-hex", KEY, "--compress", "snappy", "--threads", threads,
                plainFile().toString(), sealed.toString()).code());
        assertTrue(Files.size(sealed) < PLAIN.length * 3 / 4, "compressed: " + Files.size(sealed));
        assertEquals(0, run("decrypt", "--key-hex", KEY, "--compress", "snappy", "--threads", threads,
                sealed.toString(), back.toString()).code());
        assertArrayEquals(PLAIN, Files.readAllBytes(back));
        // Decrypted by the library alone, the plaintext is a standard Snappy framed stream.
        GcmStreams gcm = GcmStreams.builder().key(HexFormat.of().parseHex(KEY)).build();
        try (InputStream in = new SnappyFramedInputStream((InputStream) gcm.decrypt(Files.newInputStream(sealed)))) {
            assertArrayEquals(PLAIN, in.readAllBytes());
        }
    }

    @Test
    void theOutputIsTheSameForEveryThreadCount() throws IOException {
        Path one = dir.resolve("one.enc");
        Path four = dir.resolve("four.enc");
        for (String[] t : new String[][] {{"1", one.toString()}, {"4", four.toString()}}) {
            assertEquals(0, run("encrypt", "--mode", "ctr", "--key-hex", KEY, "--iv-hex", IV, "--compress", "snappy",
                    "--threads", t[0], plainFile().toString(), t[1]).code());
        }
        assertArrayEquals(Files.readAllBytes(one), Files.readAllBytes(four));
        Path back = dir.resolve("back.txt");
        assertEquals(0, run("decrypt", "--mode", "ctr", "--key-hex", KEY, "--iv-hex", IV, "--compress", "snappy",
                four.toString(), back.toString()).code());
        assertArrayEquals(PLAIN, Files.readAllBytes(back));
    }

    /** Every core up to 8 by default, computed by the CLI: the library's default may be 1. */
    @Test
    void threadsDefaultToTheAvailableProcessorsUpTo8() {
        int expected = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), 8));
        assertEquals(expected, new CipherOptions().threads());
        for (String command : new String[] {"encrypt", "decrypt"}) {
            StringWriter out = new StringWriter();
            assertEquals(0, Main.run(new String[] {command, "--help"}, new PrintWriter(out),
                    new PrintWriter(new StringWriter())));
            String help = out.toString().replaceAll("\\s+", " ");
            assertTrue(help.contains("--threads=N Threads working on the stream: 1..64 (default: one per available"
                    + " processor, at most 8)."), help);
        }
    }

    @Test
    void damageInsideACompressedFrameExits1AndLeavesNoOutput() throws IOException {
        Path sealed = dir.resolve("out.enc");
        assertEquals(0, run("encrypt", "--mode", "ctr", "--key-hex", KEY, "--iv-hex", IV, "--compress", "snappy",
                plainFile().toString(), sealed.toString()).code());
        byte[] bad = Files.readAllBytes(sealed);
        bad[bad.length / 2] ^= 1;
        Files.write(sealed, bad);
        Path back = dir.resolve("back.txt");
        Result r = run("decrypt", "--mode", "ctr", "--key-hex", KEY, "--iv-hex", IV, "--compress", "snappy",
                sealed.toString(), back.toString());
        assertEquals(1, r.code(), r.err());
        String err = KeyHexWarning.after(r.err());
        assertTrue(err.contains("corrupt Snappy framed stream: frame"), err);
        assertEquals(1, err.strip().lines().count(), "one line: " + err);
        assertFalse(Files.exists(back), "no partial OUT");
    }

    @ParameterizedTest(name = "--mode {0}")
    @ValueSource(strings = {"gcm", "ctr"})
    void decryptingWithoutTheCompressFlagIsRefused(String mode) throws IOException {
        Path sealed = dir.resolve("out.sealed");
        Path back = dir.resolve("back.txt");
        String[] key = mode.equals("gcm") ? new String[] {"--key-hex", KEY}
                : new String[] {"--mode", "ctr", "--key-hex", KEY, "--iv-hex", IV};
        assertEquals(0, run(concat(concat(new String[] {"encrypt"}, key), "--compress", "snappy", plainFile().toString(),
                sealed.toString())).code());
        Result r = run(concat(concat(new String[] {"decrypt"}, key), sealed.toString(), back.toString()));
        assertEquals(1, r.code(), r.err());
        String err = KeyHexWarning.after(r.err());
        assertEquals("sealpipe: cannot decrypt " + sealed + ": this stream is compressed: add --compress snappy to"
                + " decompress it (or --raw to write the decrypted bytes as they are); " + back + " was left untouched",
                err.strip());
        assertFalse(Files.exists(back), "no OUT");
        try (var files = Files.list(dir)) {
            assertTrue(files.noneMatch(f -> f.getFileName().toString().endsWith(".tmp")), "temporary files left behind");
        }
    }

    @Test
    void nothingReachesStandardOutputEither() throws IOException, InterruptedException {
        Path sealed = dir.resolve("out.sealed");
        assertEquals(0, run("encrypt", "--key-hex", KEY, "--compress", "snappy", plainFile().toString(),
                sealed.toString()).code());
        Path keyFile = Files.write(dir.resolve("key"), HexFormat.of().parseHex(KEY));
        List<String> command = ChildJvm.command("-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "decrypt", "--key-file", keyFile.toString());
        Process p = new ProcessBuilder(command).redirectInput(sealed.toFile()).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, p.waitFor(), err);
        assertEquals(0, out.length, "nothing on standard output");
        assertTrue(err.startsWith("sealpipe: cannot decrypt standard input: this stream is compressed: add --compress"
                + " snappy"), err);
        assertTrue(err.contains("--raw") && err.contains("nothing went to standard output"), err);
    }

    @Test
    void rawWritesTheFramedStream() throws IOException {
        Path sealed = dir.resolve("out.sealed");
        Path framed = dir.resolve("framed.sz");
        assertEquals(0, run("encrypt", "--key-hex", KEY, "--compress", "snappy", plainFile().toString(),
                sealed.toString()).code());
        assertEquals(0, run("decrypt", "--key-hex", KEY, "--raw", sealed.toString(), framed.toString()).code());
        try (InputStream in = new SnappyFramedInputStream(new ByteArrayInputStream(Files.readAllBytes(framed)))) {
            assertArrayEquals(PLAIN, in.readAllBytes());
        }
        Result both = run("decrypt", "--key-hex", KEY, "--raw", "--compress", "snappy", sealed.toString(),
                dir.resolve("x").toString());
        assertEquals(2, both.code(), both.err());
        assertTrue(both.err().contains("--raw is for decrypting without --compress"), both.err());
    }

    @Test
    void onlyTheWholeIdentifierAtTheStartIsRefused() throws IOException {
        byte[] id = SnappyGuard.STREAM_IDENTIFIER;
        byte[][] plains = {
            new byte[0], Arrays.copyOf(id, 9), Arrays.copyOf(id, 11), concat(new byte[] {0}, id), PLAIN,
        };
        for (byte[] plain : plains) {
            Path in = Files.write(dir.resolve("plain"), plain);
            Path sealed = dir.resolve("sealed");
            Path back = dir.resolve("back");
            Files.deleteIfExists(back);
            assertEquals(0, run("encrypt", "--force", "--key-hex", KEY, in.toString(), sealed.toString()).code());
            Result r = run("decrypt", "--key-hex", KEY, sealed.toString(), back.toString());
            assertEquals(plain == plains[2] ? 1 : 0, r.code(), r.err());
            assertEquals(plain != plains[2], Files.exists(back));
        }
        // The identifier alone is a complete (empty) framed stream: refused, unless --raw.
        Path sealed = dir.resolve("id.sealed");
        assertEquals(0, run("encrypt", "--key-hex", KEY, Files.write(dir.resolve("id"), id).toString(),
                sealed.toString()).code());
        assertEquals(1, run("decrypt", "--force", "--key-hex", KEY, sealed.toString(), dir.resolve("back").toString()).code());
        assertEquals(0, run("decrypt", "--force", "--raw", "--key-hex", KEY, sealed.toString(), dir.resolve("back").toString())
                .code());
        assertArrayEquals(id, Files.readAllBytes(dir.resolve("back")));
    }

    private static String[] concat(String[] a, String... b) {
        String[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test
    void badValuesExit2WithOneLine() throws IOException {
        String in = plainFile().toString();
        Path out = dir.resolve("out");
        for (String[] args : new String[][] {
            {"encrypt", "--key-hex", KEY, "--compress", "zstd", in, out.toString()},
            {"encrypt", "--key-hex", KEY, "--threads", "0", in, out.toString()},
            {"decrypt", "--key-hex", KEY, "--threads", "65", in, out.toString()},
            {"encrypt", "--key-hex", KEY, "--threads", "many", in, out.toString()},
        }) {
            Result r = run(args);
            assertEquals(2, r.code(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
            assertTrue(r.err().contains(args[3]), r.err());
            assertFalse(Files.exists(out));
        }
    }
}
