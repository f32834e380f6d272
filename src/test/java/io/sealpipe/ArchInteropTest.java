package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ctr.CryptoInputStream;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.Platform;
import io.sealpipe.engine.TestEngines;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Files written on one architecture read on another: the build runs this test on x86_64 (the
 * test phase), then on aarch64 under qemu-user (profile {@code aarch64}), then on x86_64 again.
 * Each run writes, into {@code target/arch-interop/<arch>/}, a CTR file and a GCM message from
 * every engine that runs here, and reads every other architecture's files: the CTR bytes must be
 * the bytes this architecture writes for the same key, IV and plaintext (CTR is deterministic),
 * and every GCM message must open, streamed and at random positions, on every engine.
 * Each run marks its files with the build's run id ({@code sealpipe.test.interop.run}, the pom
 * sets the build's timestamp) and reads only the files of the same build, so files an earlier
 * build left in {@code target} are neither trusted nor held against this one (without a run id,
 * from an IDE, it reads whatever is there). {@code -Dsealpipe.test.interop.expect=ARCH} makes
 * this build's files of ARCH required (the later runs), so that a missing earlier run fails
 * instead of passing with nothing to read.
 */
class ArchInteropTest {
    private static final Path ROOT = Path.of(System.getProperty("sealpipe.test.interop.dir", "target/arch-interop"));
    private static final String ARCH = Platform.current().arch();
    /** 1 MiB and a little: several GCM chunks and a last short one, CTR counters past 2^16 blocks. */
    private static final byte[] PLAINTEXT = CtrFixtures.bytes(30, (1 << 20) + 4097);
    private static final byte[] KEY = CtrFixtures.key(32);
    private static final byte[] IV = CtrFixtures.HEX.parseHex("fffffffffffffffffffffffffffff000");
    private static final byte[] CONTEXT = "sealpipe arch interop".getBytes(StandardCharsets.UTF_8);

    private static final String RUN = System.getProperty("sealpipe.test.interop.run", "");
    private static final String RUN_FILE = "run-id.txt";

    private static final List<EngineKind> ENGINES =
            List.of(EngineKind.OPENSSL_JNI, EngineKind.OPENSSL_JNA, EngineKind.JCE);

    @Test
    void writesAndReadsFilesAcrossArchitectures() throws IOException {
        Path mine = ROOT.resolve(ARCH);
        Files.createDirectories(mine);
        Files.deleteIfExists(mine.resolve(RUN_FILE));
        for (EngineKind kind : ENGINES) {
            write(mine.resolve("ctr-" + kind.id() + ".bin"),
                    out -> ctr(kind).encrypt(out));
            write(mine.resolve("gcm-" + kind.id() + ".bin"),
                    out -> GcmStreams.builder().engine(TestEngines.engine(kind)).key(KEY).context(CONTEXT).build()
                            .encrypt(out));
        }
        byte[] expectedCtr = Files.readAllBytes(mine.resolve("ctr-" + ENGINES.get(0).id() + ".bin"));
        for (EngineKind kind : ENGINES) {
            assertArrayEquals(expectedCtr, Files.readAllBytes(mine.resolve("ctr-" + kind.id() + ".bin")),
                    ARCH + ": " + kind.id() + " wrote other CTR bytes than " + ENGINES.get(0).id());
        }

        // Written last: the files are complete once the run id is there.
        Files.writeString(mine.resolve(RUN_FILE), RUN);

        List<String> others = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(ROOT)) {
            dirs.filter(Files::isDirectory).filter(ArchInteropTest::ofThisRun).map(p -> p.getFileName().toString())
                    .filter(a -> !a.equals(ARCH)).sorted().forEach(others::add);
        }
        String expect = System.getProperty("sealpipe.test.interop.expect", "");
        if (!expect.isEmpty()) {
            assertTrue(others.contains(expect), "no files written on " + expect + " by this build (run " + RUN + ") in "
                    + ROOT.toAbsolutePath() + ": the run on " + expect + " must come first (mvn verify -Paarch64 runs"
                    + " them in order)");
        }
        for (String other : others) {
            readOtherArchitecture(ROOT.resolve(other), other, expectedCtr);
        }
    }

    private void readOtherArchitecture(Path dir, String other, byte[] expectedCtr) throws IOException {
        for (EngineKind writer : ENGINES) {
            Path ctrFile = dir.resolve("ctr-" + writer.id() + ".bin");
            assertArrayEquals(expectedCtr, Files.readAllBytes(ctrFile),
                    ctrFile + " (" + writer.id() + " on " + other + ") differs from the CTR bytes written on " + ARCH);
            Path gcmFile = dir.resolve("gcm-" + writer.id() + ".bin");
            for (EngineKind reader : ENGINES) {
                String what = gcmFile + " (" + writer.id() + " on " + other + ") read by " + reader.id() + " on " + ARCH;
                GcmStreams gcm = GcmStreams.builder().engine(TestEngines.engine(reader)).key(KEY).context(CONTEXT).build();
                try (InputStream in = gcm.decrypt(Files.newInputStream(gcmFile))) {
                    assertArrayEquals(PLAINTEXT, in.readAllBytes(), what);
                }
                try (FileChannel file = FileChannel.open(gcmFile); GcmSeekableChannel channel = gcm.open(file)) {
                    assertEquals(PLAINTEXT.length, channel.size(), what);
                    checkRandomReads(what, (position, length) -> {
                        ByteBuffer dst = ByteBuffer.allocate(length);
                        while (dst.hasRemaining() && channel.read(dst, position + dst.position()) > 0) {
                            // positioned reads until full or end of message
                        }
                        return Arrays.copyOf(dst.array(), dst.position());
                    });
                }
                try (CryptoInputStream ctrIn = ctr(reader).decrypt(FileChannel.open(ctrFile))) {
                    checkRandomReads(what.replace(gcmFile.toString(), ctrFile.toString()), (position, length) -> {
                        byte[] got = new byte[length];
                        int n = ctrIn.read(position, got, 0, length);
                        return Arrays.copyOf(got, Math.max(n, 0));
                    });
                    ctrIn.seek(PLAINTEXT.length / 3);
                    assertArrayEquals(Arrays.copyOfRange(PLAINTEXT, PLAINTEXT.length / 3, PLAINTEXT.length),
                            ctrIn.readAllBytes(), "seek and read on " + ctrFile + " by " + reader.id());
                }
            }
        }
    }

    /** Whether a directory holds the complete files of this build's run (any complete files, without a run id). */
    private static boolean ofThisRun(Path dir) {
        try {
            Path runFile = dir.resolve(RUN_FILE);
            return Files.exists(runFile) && (RUN.isEmpty() || Files.readString(runFile).equals(RUN));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private interface RangeReader {
        byte[] read(long position, int length) throws IOException;
    }

    /** Reads 40 seeded ranges (block edges, chunk edges, the end) and compares with the plaintext. */
    private static void checkRandomReads(String what, RangeReader reader) throws IOException {
        Random random = new Random(30);
        for (int i = 0; i < 40; i++) {
            long position = i == 0 ? PLAINTEXT.length - 5 : i == 1 ? 65_535 : random.nextInt(PLAINTEXT.length);
            int length = 1 + random.nextInt(70_000);
            byte[] got = reader.read(position, length);
            int end = (int) Math.min(PLAINTEXT.length, position + length);
            assertArrayEquals(Arrays.copyOfRange(PLAINTEXT, (int) position, end), got,
                    what + ": " + length + " bytes at " + position);
        }
    }

    private static CtrStreams ctr(EngineKind kind) {
        return CtrStreams.builder().engine(TestEngines.engine(kind, Operation.CTR)).key(KEY).iv(IV).build();
    }

    private interface Encryptor {
        OutputStream wrap(OutputStream out) throws IOException;
    }

    /** Writes the plaintext through the encryptor into a temporary file, then moves it into place. */
    private static void write(Path file, Encryptor encryptor) throws IOException {
        Files.createDirectories(file.getParent());
        Path temp = file.resolveSibling(file.getFileName() + ".tmp");
        try (OutputStream out = encryptor.wrap(Files.newOutputStream(temp))) {
            for (int off = 0; off < PLAINTEXT.length; off += 100_000) {
                out.write(PLAINTEXT, off, Math.min(100_000, PLAINTEXT.length - off));
            }
        }
        Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
    }

}
