package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.GcmStreams;
import io.sealpipe.internal.TextLikeData;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.xerial.snappy.SnappyFramedInputStream;

/** {@code --compress snappy} and {@code --threads N} on encrypt and decrypt. */
class CompressCommandTest {
    private static final String KEY = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
    private static final String IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
    private static final byte[] PLAIN = TextLikeData.generate(5, 3 << 20);

    @TempDir
    Path dir;

    record Result(int code, String err) {}

    static Result run(String... args) {
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(new StringWriter()), new PrintWriter(err));
        return new Result(code, err.toString());
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

    @Test
    void decryptingWithoutTheCompressFlagGivesTheFramedStream() throws IOException {
        Path sealed = dir.resolve("out.sealed");
        Path framed = dir.resolve("framed.sz");
        assertEquals(0, run("encrypt", "--key-hex", KEY, "--compress", "snappy", plainFile().toString(),
                sealed.toString()).code());
        assertEquals(0, run("decrypt", "--key-hex", KEY, sealed.toString(), framed.toString()).code());
        try (InputStream in = new SnappyFramedInputStream(new ByteArrayInputStream(Files.readAllBytes(framed)))) {
            assertArrayEquals(PLAIN, in.readAllBytes());
        }
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
