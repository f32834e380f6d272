package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.cli.Main;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.snappy.SnappyStreams;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 29's killed writers: a child JVM writing a GCM stream, a Snappy+GCM stream, a sealed file
 * ({@code sfile://}) or running the CLI's {@code encrypt} is killed with SIGKILL at
 * {@value #MOMENTS} moments each, chosen by the seed: after a seeded number of plaintext bytes
 * written (the child says how many after each write), or once it is closing, or, for the CLI,
 * once its output directory holds a seeded number of bytes. Every file left behind is read by
 * every reader here ({@code GcmStreams}, {@code GcmSeekableChannel}, the sealed file system, the
 * CLI's {@code decrypt}): each must reject it, or return the whole plaintext (the writer sealed
 * it in the moment before the kill landed); never a shorter message. The CLI's OUT is whole or
 * absent: if it exists (the kill landed after its rename), every reader reads the whole message.
 *
 * <p>Rerun with {@code -Dsealpipe.test.seed=N}; the seed and the moment are in every failure.
 */
class KilledWriterTest {
    private static final long SEED = Long.getLong("sealpipe.test.seed", 29);
    private static final int MOMENTS = 30;
    private static final byte[] KEY =
            HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"gcm", "snappy-gcm", "sfile", "cli"})
    void aWriterKilledAtAnyMomentLeavesNoShorterValidMessage(String kind, @TempDir Path dir) throws Exception {
        URI keystore = URI.create("jceks://file" + dir.resolve("keys.jceks").toAbsolutePath());
        createKey(keystore);
        SplittableRandom moments = new SplittableRandom(SEED ^ kind.hashCode());
        byte[] plain = KilledWriterChild.plain(SEED);
        Path input = dir.resolve("plain.in");
        Files.write(input, plain);
        int finished = 0;
        int whole = 0;
        int rejected = 0;
        try (FileSystem sealed = FileSystem.get(URI.create("sfile:///"), KilledWriterChild.sealedConf(keystore))) {
            for (int moment = 0; moment < MOMENTS; moment++) {
                Path out = Files.createDirectories(dir.resolve("run" + moment));
                // a moment: plaintext bytes written (CLI: bytes in its directory); past the end: while closing
                long at = moment == 0 ? 0 : moments.nextLong(KilledWriterChild.SIZE + KilledWriterChild.SIZE / 10);
                String where = kind + ", moment " + moment + " (at " + at + "), seed " + SEED;
                boolean done = kind.equals("cli") ? killCli(input, out, at)
                        : killChild(kind, out.resolve("file"), keystore, at);
                if (done) {
                    finished++;
                }
                List<Path> left;
                try (Stream<Path> files = Files.list(out)) {
                    left = files.filter(f -> !f.getFileName().toString().endsWith(".crc")).toList();
                }
                Path cliOut = out.resolve("out.sealed");
                if (kind.equals("cli") && done) {
                    assertTrue(Files.exists(cliOut), where + ": encrypt finished, so OUT exists");
                }
                for (Path file : left) {
                    Map<String, byte[]> read = readers(file, sealed, kind.equals("snappy-gcm"));
                    for (Map.Entry<String, byte[]> r : read.entrySet()) {
                        if (file.equals(cliOut) && r.getValue() == null) {
                            fail(where + ": the CLI left an OUT that " + r.getKey()
                                    + " rejects: OUT appears whole or not at all");
                        }
                        if (r.getValue() == null) {
                            rejected++;
                        }
                        if (r.getValue() != null) {
                            // the channel and the sealed file system return the Snappy framing: decompressed here
                            byte[] got = kind.equals("snappy-gcm") && !r.getKey().equals("cli decrypt")
                                    && !r.getKey().equals("GcmStreams") ? decompressed(r.getValue()) : r.getValue();
                            if (!Arrays.equals(plain, got)) {
                                fail(where + ": " + r.getKey() + " read " + got.length
                                        + " bytes of " + file.getFileName()
                                        + " that verify, not the whole message (" + plain.length + ")");
                            }
                            whole++; // the writer had sealed it in the moment before the kill landed
                        }
                    }
                }
            }
        }
        System.out.println(kind + ": " + MOMENTS + " kills, " + finished + " after the writer finished, " + rejected
                + " rejections and " + whole + " reads of a whole message sealed before the kill landed, seed " + SEED);
        assertTrue(rejected > 0,
                kind + ": no reader rejected any file left: the kills all came too late to prove anything");
    }

    /** Starts the child and kills it at {@code at}; true if it had finished (printed {@code closed}). */
    private static boolean killChild(String kind, Path file, URI keystore, long at) throws Exception {
        Process child = new ProcessBuilder(ChildJvm.command("-XX:TieredStopAtLevel=1", "-Xlog:disable", "-cp",
                System.getProperty("java.class.path"), KilledWriterChild.class.getName(), kind, file.toString(),
                Long.toString(SEED), HexFormat.of().formatHex(KEY), keystore.toString()))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        boolean closed = false;
        boolean wrote = false;
        try (BufferedReader lines =
                        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = lines.readLine()) != null; ) {
                wrote = true;
                if (line.equals("closed")) {
                    closed = true;
                    break;
                }
                if (line.equals("closing") || (line.startsWith("wrote ") && Long.parseLong(line.substring(6)) >= at)) {
                    break;
                }
            }
            child.destroyForcibly(); // SIGKILL
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the killed child ended");
        }
        // a child that failed before its first write would leave nothing, and prove nothing
        assertTrue(wrote, "the " + kind + " child started writing (it printed nothing: run KilledWriterChild by hand)");
        return closed;
    }

    /**
     * Runs the CLI's encrypt in a child and kills it once its directory holds {@code at} bytes; true
     * if it finished.
     */
    private static boolean killCli(Path input, Path dir, long at) throws Exception {
        Process child = new ProcessBuilder(ChildJvm.command("-XX:TieredStopAtLevel=1", "-Xlog:disable", "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "encrypt", "--key-hex",
                HexFormat.of().formatHex(KEY), input.toString(), dir.resolve("out.sealed").toString()))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        // against a child that hangs, not a timing claim
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (child.isAlive() && bytesIn(dir) < at && System.nanoTime() < deadline) {
            Thread.sleep(1); // polls for the moment to kill at; what is checked after does not depend on it
        }
        child.destroyForcibly(); // SIGKILL, or nothing if it ended
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the killed child ended");
        int exit = child.exitValue();
        assertTrue(exit == 0 || exit == 137,
                "sealpipe encrypt ended by itself or by the SIGKILL, not with exit " + exit);
        return exit == 0;
    }

    private static long bytesIn(Path dir) throws IOException {
        long total = 0;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                try {
                    total += Files.size(f);
                } catch (java.nio.file.NoSuchFileException renamed) {
                    // gone between the listing and the size
                }
            }
        }
        return total;
    }

    /**
     * What each reader makes of {@code file}: its bytes, or null where it rejected the file.
     * GcmStreams over a compressed stream decompresses; the channel and the sealed file system
     * return the compressed content.
     */
    private static Map<String, byte[]> readers(Path file, FileSystem sealed, boolean compressed) throws IOException {
        Map<String, byte[]> read = new LinkedHashMap<>();
        GcmStreams gcm = GcmStreams.builder().key(KEY.clone()).build();
        read.put("GcmStreams", orNull(() -> {
            InputStream in = gcm.decrypt(Files.newInputStream(file));
            if (compressed) {
                in = SnappyStreams.builder().build().decompress(in);
            }
            try (InputStream i = in) {
                return i.readAllBytes();
            }
        }));
        read.put("GcmSeekableChannel", orNull(() -> {
            try (GcmSeekableChannel channel = gcm.open(FileChannel.open(file))) {
                ByteArrayOutputStream all = new ByteArrayOutputStream();
                ByteBuffer b = ByteBuffer.allocate(70_000);
                while (channel.read(b.clear()) >= 0) {
                    all.write(b.array(), 0, b.position());
                }
                return all.toByteArray();
            }
        }));
        read.put("sealed file system", orNull(() -> {
            try (FSDataInputStream in =
                            sealed.open(new org.apache.hadoop.fs.Path("sfile://" + file.toAbsolutePath()))) {
                return in.readAllBytes();
            }
        }));
        read.put("cli decrypt", orNull(() -> {
            Path back = file.resolveSibling(file.getFileName() + ".back");
            List<String> args = new ArrayList<>(List.of("decrypt", "--key-hex", HexFormat.of().formatHex(KEY)));
            if (compressed) {
                args.addAll(List.of("--compress", "snappy"));
            }
            args.addAll(List.of(file.toString(), back.toString()));
            StringWriter err = new StringWriter();
            int code = Main.run(args.toArray(String[]::new), new PrintWriter(new StringWriter()), new PrintWriter(err));
            if (code != 0) {
                assertFalse(Files.exists(back), "a rejected decrypt leaves no OUT: " + err);
                return null;
            }
            byte[] bytes = Files.readAllBytes(back);
            Files.delete(back);
            return bytes;
        }));
        return read;
    }

    private interface Read {
        byte[] read() throws IOException;
    }

    private static byte[] orNull(Read read) {
        try {
            return read.read();
        } catch (IOException rejected) {
            return null;
        }
    }

    /** The plaintext of a Snappy framing that verified (its frames depend on the writer's flushes). */
    private static byte[] decompressed(byte[] framed) throws IOException {
        try (InputStream in = SnappyStreams.builder().build().decompress(new ByteArrayInputStream(framed))) {
            return in.readAllBytes();
        }
    }

    private static void createKey(URI keystore) throws IOException {
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        try {
            KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
            options.setBitLength(256);
            options.setCipher("AES/CTR/NoPadding");
            provider.createKey("data", KEY.clone(), options);
            provider.flush();
        } finally {
            provider.close();
        }
    }
}
