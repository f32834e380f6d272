package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.cli.CliRun.Result;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code sealpipe encrypt|decrypt} in the default gcm mode: round trips, interop with
 * {@link GcmStreams}, the tamper cases (exit 1, chunk named, no OUT) and every bad argument
 * (exit 2, one line).
 */
class GcmCommandTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final String KEY256 = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
    private static final String KEY128 = "2b7e151628aed2a6abf7158809cf4f3c";
    private static final String OTHER_KEY256 = "0000000000000000000000000000000000000000000000000000000000000001";
    private static final String CONTEXT = "shuffle_3_7_0";
    private static final String CONTEXT_HEX = HEX.formatHex(CONTEXT.getBytes(StandardCharsets.US_ASCII));
    private static final int CHUNK = 16 * 1024;
    private static final int SEALED_CHUNK = CHUNK + 16;
    private static final int HEADER = 56;

    @TempDir
    Path dir;

    static Result run(String... args) {
        return CliRun.run(args);
    }

    private static String[] args(String command, String... rest) {
        List<String> args = new ArrayList<>(List.of(command));
        args.addAll(List.of(rest));
        return args.toArray(String[]::new);
    }

    private static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static long sealedLength(long plain) {
        return HEADER + plain + (plain / CHUNK + 1) * 16;
    }

    private Path write(String name, byte[] content) throws IOException {
        return Files.write(dir.resolve(name), content);
    }

    private void assertNoTemporaryFiles() throws IOException {
        try (var files = Files.list(dir)) {
            assertTrue(files.noneMatch(f -> f.getFileName().toString().endsWith(".tmp")), "temporary files left behind");
        }
    }

    static List<EngineKind> engines() {
        return TestEngines.kinds().toList();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("engines")
    void defaultModeRoundTripOnEveryEngine(EngineKind kind) throws Exception {
        TestEngines.engine(kind); // skips an engine that cannot run here (never in CI)
        Path keyFile = write("key", HEX.parseHex(KEY256));
        for (int size : new int[] {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * 1024 * 1024 + 5}) {
            byte[] plain = random(size, size);
            Path in = write("plain", plain);
            Path enc = dir.resolve("enc");
            Path dec = dir.resolve("dec");
            Result e = run("encrypt", "--force", "--key-file", keyFile.toString(), "--engine", kind.id(), in.toString(),
                    enc.toString());
            assertEquals(0, e.code(), e.err());
            assertEquals(sealedLength(size), Files.size(enc), "Cobblestone-256 length for " + size + " bytes");
            // The explicit spelling of the default reads it back.
            Result d = run("decrypt", "--force", "--mode", "gcm", "--aes", "256", "--key-hex", KEY256, "--engine",
                    kind.id(), enc.toString(), dec.toString());
            assertEquals(0, d.code(), d.err());
            assertArrayEquals(plain, Files.readAllBytes(dec), size + " bytes on " + kind.id());
        }
        assertNoTemporaryFiles();
    }

    /** Each option appears once in the help (picocli before 4.7.7 listed argument-group options twice). */
    @Test
    void helpListsEveryOptionOnce() {
        for (String command : new String[] {"encrypt", "decrypt"}) {
            StringWriter out = new StringWriter();
            assertEquals(0, Main.run(new String[] {command, "--help"}, new PrintWriter(out), new PrintWriter(new StringWriter())));
            String help = out.toString();
            for (String option : new String[] {"--key-hex=HEX ", "--key-file=PATH ", "--context-hex=HEX ", "--iv-hex=HEX "}) {
                long lines = help.lines().filter(line -> line.startsWith("      " + option)).count(); // option list only
                assertEquals(1, lines, command + " --help lists " + option.trim() + " " + lines + " times:\n" + help);
            }
        }
    }

    @Test
    void aes128WithContextRoundTrip() throws Exception {
        byte[] plain = random(1, 5 * CHUNK + 77);
        Path in = write("plain", plain);
        Path enc = dir.resolve("enc");
        Path dec = dir.resolve("dec");
        assertEquals(0, run("encrypt", "--aes", "128", "--key-hex", KEY128, "--context-hex", CONTEXT_HEX, in.toString(),
                enc.toString()).code());
        assertEquals(sealedLength(plain.length), Files.size(enc));
        Result d = run("decrypt", "--aes", "128", "--key-hex", KEY128, "--context-hex", CONTEXT_HEX, enc.toString(),
                dec.toString());
        assertEquals(0, d.code(), d.err());
        assertArrayEquals(plain, Files.readAllBytes(dec));
        // Two encryptions of the same input differ: a fresh random salt each time.
        Path again = dir.resolve("again");
        assertEquals(0, run("encrypt", "--aes", "128", "--key-hex", KEY128, "--context-hex", CONTEXT_HEX, in.toString(),
                again.toString()).code());
        assertFalse(Arrays.equals(Files.readAllBytes(enc), Files.readAllBytes(again)), "salt must be fresh");
    }

    @Test
    void commandLineAndJavaReadEachOther() throws Exception {
        for (String keyHex : new String[] {KEY256, KEY128}) {
            String aes = keyHex.length() == 64 ? "256" : "128";
            GcmStreams gcm = GcmStreams.builder().key(HEX.parseHex(keyHex))
                    .context(CONTEXT.getBytes(StandardCharsets.US_ASCII)).build();
            byte[] plain = random(aes.hashCode(), 2 * CHUNK + 1000);

            // CLI -> Java, streaming and random access.
            Path in = write("plain-" + aes, plain);
            Path enc = dir.resolve("cli-" + aes);
            assertEquals(0, run("encrypt", "--aes", aes, "--key-hex", keyHex, "--context-hex", CONTEXT_HEX, in.toString(),
                    enc.toString()).code());
            try (InputStream s = gcm.decrypt(Files.newInputStream(enc))) {
                assertArrayEquals(plain, s.readAllBytes(), "GcmStreams reads the CLI's Cobblestone-" + aes);
            }
            try (GcmSeekableChannel ch = gcm.open(FileChannel.open(enc))) {
                assertEquals(plain.length, ch.size());
                byte[] part = new byte[3000];
                ch.readFully(CHUNK - 1000, part, 0, part.length);
                assertArrayEquals(Arrays.copyOfRange(plain, CHUNK - 1000, CHUNK + 2000), part);
            }

            // Java -> CLI.
            Path javaEnc = dir.resolve("java-" + aes);
            try (OutputStream out = gcm.encrypt(Files.newOutputStream(javaEnc))) {
                out.write(plain);
            }
            Path dec = dir.resolve("dec-" + aes);
            Result d = run("decrypt", "--aes", aes, "--key-hex", keyHex, "--context-hex", CONTEXT_HEX, javaEnc.toString(),
                    dec.toString());
            assertEquals(0, d.code(), d.err());
            assertArrayEquals(plain, Files.readAllBytes(dec), "the CLI reads GcmStreams' Cobblestone-" + aes);
        }
    }

    @Test
    void decryptsAnIndependentImplementationsVector() throws Exception {
        // Wycheproof c2sp_chunked_encryption_aes_128_gcm_test.json, tcId 10 (Apache-2.0, see
        // src/test/resources/vectors/wycheproof/LICENSE): written by filippo.io/cobblestone, with a
        // context holding a zero byte; the 7-byte message is known by its SHA-512.
        String key = "59454c4c4f57205355424d4152494e45";
        String context = "7465737400636f6e74657874";
        Path enc = write("vector", HEX.parseHex("bfcff9bb0c0e2f36cb63abb0f787bb62b5345f47be4a8397be381baeec749ee0a2e053584f63e2"
                + "9e41fc5caacc1303c4e058168625b8c5a437656312c43a99fc4dfa0470c9cbdb757a21c2929a2e99"));
        Path dec = dir.resolve("dec");
        Result r = run("decrypt", "--aes", "128", "--key-hex", key, "--context-hex", context, enc.toString(), dec.toString());
        assertEquals(0, r.code(), r.err());
        byte[] plain = Files.readAllBytes(dec);
        assertEquals(7, plain.length);
        assertEquals("e85f32a85f1d4f7c9b2d36d20eca8435d81253e7075e9dea069eb1b6da48daf9"
                + "2ef1797367b520d8a46c4f72cecb85b1daff8887fcb41721d39943d1952fc180",
                HEX.formatHex(MessageDigest.getInstance("SHA-512").digest(plain)));
        // The context is bound in, up to and past its zero byte.
        assertFailed(run("decrypt", "--aes", "128", "--key-hex", key, "--context-hex", context.substring(0, 8),
                enc.toString(), dir.resolve("dec2").toString()), "commitment");
    }

    @Test
    void wrongKeyOrContextFailsAtTheCommitment() throws Exception {
        Path in = write("plain", random(2, 40_000));
        Path enc = dir.resolve("enc");
        assertEquals(0, run("encrypt", "--key-hex", KEY256, "--context-hex", CONTEXT_HEX, in.toString(), enc.toString())
                .code());
        Path out = dir.resolve("out");
        List<String[]> wrong = List.of(
                args("decrypt", "--key-hex", OTHER_KEY256, "--context-hex", CONTEXT_HEX),
                args("decrypt", "--key-hex", KEY256, "--context-hex", CONTEXT_HEX + "00"),
                args("decrypt", "--key-hex", KEY256)); // context missing
        for (String[] a : wrong) {
            List<String> full = new ArrayList<>(List.of(a));
            full.addAll(List.of(enc.toString(), out.toString()));
            Result r = run(full.toArray(String[]::new));
            assertFailed(r, "commitment");
            assertTrue(r.err().contains("wrong key or context"), r.err());
            assertFalse(Files.exists(out), "no OUT after a failed decryption");
        }
        assertNoTemporaryFiles();
    }

    @Test
    void tamperedFileNamesTheChunkAndLeavesNoOutput() throws Exception {
        Path in = write("plain", random(3, 5 * CHUNK + 10));
        Path enc = dir.resolve("enc");
        assertEquals(0, run("encrypt", "--key-hex", KEY256, in.toString(), enc.toString()).code());
        byte[] sealed = Files.readAllBytes(enc);
        Path out = dir.resolve("out");

        byte[] flipped = sealed.clone();
        flipped[HEADER + 2 * SEALED_CHUNK + 100] ^= 1;
        Result r = run("decrypt", "--force", "--key-hex", KEY256, write("flipped", flipped).toString(), out.toString());
        assertFailed(r, "chunk 2 ");
        assertTrue(r.err().contains("failed authentication") && r.err().contains("was left untouched"), r.err());
        assertFalse(Files.exists(out), "no OUT after a failed decryption");

        // An existing OUT keeps its contents, even with --force.
        Files.writeString(out, "previous contents");
        byte[] truncated = Arrays.copyOf(sealed, HEADER + 5 * SEALED_CHUNK);
        Result t = run("decrypt", "--force", "--key-hex", KEY256, write("truncated", truncated).toString(),
                out.toString());
        assertFailed(t, "truncated");
        assertTrue(t.err().contains("ends with a full chunk (chunk 4)"), t.err());
        assertEquals("previous contents", Files.readString(out));

        byte[] swapped = sealed.clone();
        System.arraycopy(sealed, HEADER, swapped, HEADER + SEALED_CHUNK, SEALED_CHUNK);
        System.arraycopy(sealed, HEADER + SEALED_CHUNK, swapped, HEADER, SEALED_CHUNK);
        assertFailed(run("decrypt", "--force", "--key-hex", KEY256, write("swapped", swapped).toString(), out.toString()), "chunk 0 ");

        byte[] extended = Arrays.copyOf(sealed, sealed.length + 1);
        assertFailed(run("decrypt", "--force", "--key-hex", KEY256, write("extended", extended).toString(), out.toString()), "chunk 5 ");

        byte[] header = Arrays.copyOf(sealed, 40);
        assertFailed(run("decrypt", "--force", "--key-hex", KEY256, write("header", header).toString(), out.toString()), "header");
        assertEquals("previous contents", Files.readString(out));
        assertNoTemporaryFiles();
    }

    @Test
    void tamperedInputToStdoutReleasesOnlyTheAuthenticatedPrefix() throws Exception {
        byte[] plain = random(4, 6 * CHUNK + 5);
        Path in = write("plain", plain);
        Path enc = dir.resolve("enc");
        assertEquals(0, run("encrypt", "--key-hex", KEY256, in.toString(), enc.toString()).code());
        byte[] sealed = Files.readAllBytes(enc);
        sealed[HEADER + 3 * SEALED_CHUNK + 7] ^= (byte) 0x80;
        Path tampered = write("tampered", sealed);

        Process p = childJvm(List.of("decrypt", "--key-hex", KEY256)).redirectInput(tampered.toFile()).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = KeyHexWarning.after(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        assertEquals(1, p.waitFor(), err);
        assertTrue(err.contains("cannot decrypt standard input: chunk 3 "), err);
        assertTrue(err.contains("standard output got only the " + out.length + " authenticated bytes")
                || out.length == 0 && err.contains("nothing went to standard output"), err);
        assertEquals(1, err.strip().lines().count(), "one line: " + err);
        assertTrue(out.length <= 3 * CHUNK && out.length % CHUNK == 0, "released " + out.length + " bytes");
        assertArrayEquals(Arrays.copyOf(plain, out.length), out, "only authentic plaintext, in order");
    }

    @Test
    void stdinToStdoutInAChildJvm() throws Exception {
        byte[] plain = random(5, 2 * CHUNK + 3);
        Path in = write("plain", plain);
        Process p = childJvm(List.of("encrypt", "--aes", "128", "--key-hex", KEY128, "--context-hex", CONTEXT_HEX))
                .redirectInput(in.toFile()).start();
        byte[] sealed = p.getInputStream().readAllBytes();
        assertEquals(0, p.waitFor(), new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        GcmStreams gcm = GcmStreams.builder().key(HEX.parseHex(KEY128)).context(CONTEXT.getBytes(StandardCharsets.US_ASCII))
                .build();
        try (InputStream s = gcm.decrypt(new ByteArrayInputStream(sealed))) {
            assertArrayEquals(plain, s.readAllBytes());
        }
    }

    @Test
    void aFailedReadWhileEncryptingNeverEndsTheMessage() throws Exception {
        // Closing the encrypting stream seals the final chunk; after a failed read of the input
        // that would turn a cut-short stream into a valid, shorter message.
        byte[] plain = random(6, 100_000);
        InputStream failing = new InputStream() {
            private final InputStream data = new ByteArrayInputStream(plain, 0, 5 * CHUNK + 123);

            @Override
            public int read() throws IOException {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = data.read(b, off, Math.min(len, 10_000));
                if (n < 0) {
                    throw new IOException("disk on fire");
                }
                return n;
            }
        };
        GcmStreams gcm = GcmStreams.builder().key(HEX.parseHex(KEY256)).build();
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        IOException e = assertThrows(IOException.class,
                () -> CryptCommand.transfer(failing, new Io.Counting(sink), CryptCommand.Codec.of(gcm), true));
        assertEquals("disk on fire", e.getMessage());
        byte[] written = sink.toByteArray();
        try (InputStream s = gcm.decrypt(new ByteArrayInputStream(written))) {
            StreamAuthenticationException failure = assertThrows(StreamAuthenticationException.class, s::readAllBytes);
            assertTrue(failure.getMessage().contains("truncated"), failure.getMessage());
        }
    }

    @Test
    void badArgumentsExitTwoWithAReason() throws Exception {
        String in = write("plain", new byte[10]).toString();
        String out = dir.resolve("out").toString();
        assertBad("--iv-hex is for --mode ctr only",
                run("encrypt", "--key-hex", KEY256, "--iv-hex", "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", in, out));
        assertBad("--iv-hex is for --mode ctr only",
                run("decrypt", "--mode", "gcm", "--key-hex", KEY256, "--iv-hex", "00", in, out));
        assertBad("--context-hex is for --mode gcm only", run("encrypt", "--mode", "ctr", "--key-hex", KEY256, "--iv-hex",
                "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", "--context-hex", "00", in, out));
        assertBad("required", run("encrypt", in, out)); // no key
        assertBad("required", run("decrypt", "--context-hex", CONTEXT_HEX, in, out));
        assertBad("--context-hex is not hex", run("encrypt", "--key-hex", KEY256, "--context-hex", "xyz", in, out));
        assertBad("--context-hex is not hex", run("decrypt", "--key-hex", KEY256, "--context-hex", "abc", in, out));
        assertBad("--mode gcm takes --aes 128 or 256", run("encrypt", "--aes", "192", "--key-hex", KEY256.substring(0, 48),
                in, out));
        assertBad("the key is 16 bytes but --aes 256 needs 32 (--aes 256 is the default",
                run("encrypt", "--key-hex", KEY128, in, out));
        assertBad("the key is 32 bytes but --aes 128 needs 16", run("encrypt", "--aes", "128", "--key-hex", KEY256, in, out));
        assertBad("--key-hex is not hex", run("encrypt", "--key-hex", "nothex", in, out));
        assertBad("--engine takes auto, openssl-jni, openssl-jna, jce or accp", run("encrypt", "--key-hex", KEY256, "--engine", "turbo", in, out));
        assertFalse(Files.exists(Path.of(out)), "no output after bad arguments");
        assertNoTemporaryFiles();
    }

    private static ProcessBuilder childJvm(List<String> args) {
        // Pipes need a separate process: run the CLI as a user would, with IN and OUT defaulted.
        List<String> command = ChildJvm.command("-cp", System.getProperty("java.class.path"), Main.class.getName());
        command.addAll(args);
        return new ProcessBuilder(command);
    }

    /** Exit 1 with one line (after the --key-hex warning, which all these runs print) naming the failure. */
    private static void assertFailed(Result r, String fragment) {
        assertEquals(1, r.code(), r.err());
        String err = KeyHexWarning.after(r.err());
        assertTrue(err.contains(fragment), "expected '" + fragment + "' in: " + err);
        assertTrue(err.startsWith("sealpipe: cannot decrypt "), err);
        assertEquals(1, err.strip().lines().count(), "one line: " + err);
    }

    private static void assertBad(String fragment, Result r) {
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains(fragment), "expected '" + fragment + "' in: " + r.err());
        assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
    }
}
