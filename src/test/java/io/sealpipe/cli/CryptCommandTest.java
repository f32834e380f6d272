package io.sealpipe.cli;

import io.sealpipe.ChildJvm;
import io.sealpipe.cli.CliRun.Result;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.Engines;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sealpipe encrypt|decrypt --mode ctr}: round trips, a known answer, and every bad input. */
class CryptCommandTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final String KEY128 = "2b7e151628aed2a6abf7158809cf4f3c";
    private static final String IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
    private static final String KEY256 = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";

    @TempDir
    Path dir;

    static Result run(String... args) {
        return CliRun.run(args);
    }

    private static String[] ctr(String command, String aes, String key, String iv, String... rest) {
        List<String> args = new ArrayList<>(List.of(command, "--mode", "ctr", "--aes", aes, "--key-hex", key, "--iv-hex", iv));
        args.addAll(List.of(rest));
        return args.toArray(String[]::new);
    }

    @Test
    void nistVectorThroughTheCommandLine() throws Exception {
        Path in = dir.resolve("plain");
        Path out = dir.resolve("cipher");
        Files.write(in, HEX.parseHex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"));
        Result r = run(ctr("encrypt", "128", KEY128, IV, in.toString(), out.toString()));
        assertEquals(0, r.code(), r.err());
        assertEquals("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff", HEX.formatHex(Files.readAllBytes(out)));
    }

    @Test
    void roundTripOnEveryEngineWithKeyFile() throws Exception {
        byte[] plain = new byte[3 * 1024 * 1024 + 5];
        new Random(3).nextBytes(plain);
        Path in = dir.resolve("plain");
        Files.write(in, plain);
        Path keyFile = dir.resolve("key");
        Files.write(keyFile, HEX.parseHex(KEY256));
        byte[] first = null;
        for (EngineKind kind : EngineKind.values()) {
            if (!Engines.report().status(kind).available() || !kind.supports(Operation.CTR)) {
                continue;
            }
            Path enc = dir.resolve("enc-" + kind.id());
            Path dec = dir.resolve("dec-" + kind.id());
            assertEquals(0, run("encrypt", "--mode", "ctr", "--aes", "256", "--key-file", keyFile.toString(), "--iv-hex",
                    IV, "--engine", kind.id(), in.toString(), enc.toString()).code());
            assertEquals(0, run("decrypt", "--mode", "ctr", "--aes", "256", "--key-file", keyFile.toString(), "--iv-hex",
                    IV, "--engine", kind.id(), enc.toString(), dec.toString()).code());
            assertArrayEquals(plain, Files.readAllBytes(dec), kind.id());
            byte[] ciphertext = Files.readAllBytes(enc);
            if (first == null) {
                first = ciphertext;
            }
            assertArrayEquals(first, ciphertext, "same ciphertext on " + kind.id());
        }
    }

    @Test
    void stdinToStdoutInAChildJvm() throws Exception {
        // Pipes need a separate process: run the CLI as a user would, with IN and OUT defaulted.
        Path in = dir.resolve("plain");
        Files.write(in, HEX.parseHex("6bc1bee22e409f96e93d7e117393172a"));
        List<String> command = ChildJvm.command("-cp", System.getProperty("java.class.path"), Main.class.getName());
        command.addAll(List.of(ctr("encrypt", "128", KEY128, IV)));
        Process p = new ProcessBuilder(command).redirectInput(in.toFile()).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertEquals(0, p.waitFor(), new String(p.getErrorStream().readAllBytes()));
        assertEquals("874d6191b620e3261bef6864990db6ce", HEX.formatHex(out));
    }

    @Test
    void badArgumentsExitTwoWithAReason() throws Exception {
        Path in = dir.resolve("plain");
        Files.write(in, new byte[10]);
        String inPath = in.toString();
        String outPath = dir.resolve("out").toString();
        assertBad("required", run("encrypt", "--mode", "ctr", "--aes", "256", "--iv-hex", IV, inPath, outPath));
        assertBad("32 bytes but --aes 128 needs 16", run(ctr("encrypt", "128", KEY256, IV, inPath, outPath)));
        assertBad("--aes must be 128 or 256", run(ctr("encrypt", "192", KEY256.substring(0, 48), IV, inPath, outPath)));
        assertBad("--iv-hex must be 16 bytes (32 hex digits), not 12",
                run(ctr("encrypt", "256", KEY256, "000102030405060708090a0b", inPath, outPath)));
        assertBad("--iv-hex is not hex", run(ctr("decrypt", "256", KEY256, "zz", inPath, outPath)));
        assertBad("--iv-hex is required", run("encrypt", "--mode", "ctr", "--aes", "256", "--key-hex", KEY256, inPath, outPath));
        assertBad("--engine takes auto, openssl-jni, openssl-jna, jce or accp", run(ctr("encrypt", "256", KEY256, IV, "--engine", "turbo", inPath, outPath)));
        assertBad("--mode", run("encrypt", "--mode", "cbc", "--aes", "256", "--key-hex", KEY256, "--iv-hex", IV, inPath, outPath));
        assertBad("cannot read --key-file", run("encrypt", "--mode", "ctr", "--aes", "256", "--key-file",
                dir.resolve("missing-key").toString(), "--iv-hex", IV, inPath, outPath));
        assertBad("--key-file holds 10 bytes: it must hold the key as 16 or 32 raw bytes, or as 32 or 64 hex digits", run("encrypt", "--mode", "ctr", "--aes", "128", "--key-file", inPath,
                "--iv-hex", IV, inPath, outPath));
        assertBad("too many arguments at argument 12", run(ctr("encrypt", "256", KEY256, IV, inPath, outPath, "extra")));
        assertFalse(Files.exists(Path.of(outPath)), "no output after bad arguments");
    }

    @Test
    void ioFailuresExitOneAndLeaveNoPartialOutput() throws Exception {
        Path out = dir.resolve("out");
        Files.writeString(out, "previous contents");
        Result missing = run(ctr("encrypt", "256", KEY256, IV, "--force", dir.resolve("missing").toString(), out.toString()));
        assertEquals(1, missing.code(), missing.err());
        assertTrue(missing.err().contains("cannot read input") && missing.err().contains("missing"), missing.err());
        assertEquals("previous contents", Files.readString(out), "a failed run leaves OUT as it was");

        Result noDir = run(ctr("encrypt", "256", KEY256, IV, out.toString(), dir.resolve("nodir/out").toString()));
        assertEquals(1, noDir.code());
        assertTrue(noDir.err().contains("cannot write output") && noDir.err().contains("no such directory"), noDir.err());

        Result isDir = run(ctr("encrypt", "256", KEY256, IV, "--force", dir.toString(), out.toString()));
        assertEquals(1, isDir.code());
        assertTrue(isDir.err().contains("is a directory"), isDir.err());
        try (var files = Files.list(dir)) {
            assertTrue(files.noneMatch(f -> f.getFileName().toString().endsWith(".tmp")), "temporary files left behind");
        }
    }

    private static void assertBad(String fragment, Result r) {
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains(fragment), "expected '" + fragment + "' in: " + r.err());
        assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
    }
}
