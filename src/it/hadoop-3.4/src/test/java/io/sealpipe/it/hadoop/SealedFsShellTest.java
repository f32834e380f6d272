package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.util.ToolRunner;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code hadoop fs} on a sealed file system: Hadoop's {@link FsShell}, run as the {@code hadoop}
 * command runs it ({@link ToolRunner}, then {@code close}), with {@code sfile} over {@code file}
 * configured and a key in a JCEKS keystore. {@code -put} of a local file stores a sealed file
 * (not the plaintext: the Cobblestone message of it, which {@link GcmStreams} decrypts);
 * {@code -cat} prints exactly the plaintext, {@code -ls} shows its length and {@code -get}
 * brings back the same bytes; after one stored bit is flipped, {@code -cat} exits non-zero with
 * sealpipe's error, naming the file and the chunk, on stderr, and prints no byte of that chunk.
 */
class SealedFsShellTest {
    private static final int CHUNK = 16 * 1024;
    private static final String KEY = "data";

    @TempDir
    Path dir;

    private URI keystore;
    private Configuration conf;

    @BeforeEach
    void createKeyAndConfiguration() throws Exception {
        keystore = URI.create("jceks://file" + dir.resolve("keys.jceks").toAbsolutePath());
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        try {
            KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
            options.setBitLength(256);
            options.setCipher("AES/CTR/NoPadding");
            provider.createKey(KEY, options);
            provider.flush();
        } finally {
            provider.close();
        }
        // As in core-site.xml; the shell's FileSystems are Hadoop's shared ones, as in the command.
        conf = new Configuration();
        conf.set("fs.sfile.impl", SealedFileSystem.class.getName());
        conf.set(SealedFileSystem.wrapsKey("sfile"), "file");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, keystore.toString());
        conf.set(SealedFileSystem.KEY_NAME, KEY);
    }

    /** What one {@code hadoop fs} command did: its exit code and what it printed. */
    record Run(int exit, byte[] out, String err) {
        String outText() {
            return new String(out, StandardCharsets.UTF_8);
        }
    }

    /** Runs {@code hadoop fs args}: FsShell through ToolRunner, System.out and System.err captured. */
    private Run fs(String... args) throws Exception {
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit;
        // FsShell's commands take System.out and System.err when they are made, in run.
        try (PrintStream capturedOut = new PrintStream(out, true); PrintStream capturedErr = new PrintStream(err, true)) {
            System.setOut(capturedOut);
            System.setErr(capturedErr);
            FsShell shell = new FsShell();
            try {
                exit = ToolRunner.run(conf, shell, args);
            } finally {
                shell.close();
            }
        } finally {
            System.setOut(stdout);
            System.setErr(stderr);
        }
        Run run = new Run(exit, out.toByteArray(), err.toString(StandardCharsets.UTF_8));
        stderr.println("hadoop fs " + String.join(" ", args) + ": exit " + exit + "; " + out.size() + " bytes out; err: "
                + run.err().strip());
        return run;
    }

    @Test
    void putCatLsGetAndATamperedCat() throws Exception {
        byte[] plain = new byte[5 * CHUNK + 1234];
        new Random(7).nextBytes(plain);
        Path local = dir.resolve("plain.bin");
        Files.write(local, plain);
        String sealedDir = "sfile://" + dir.resolve("sealed").toAbsolutePath();
        String sealed = sealedDir + "/plain.bin";
        Path stored = dir.resolve("sealed").resolve("plain.bin");

        assertEquals(0, fs("-mkdir", "-p", sealedDir).exit());
        Run put = fs("-put", local.toUri().toString(), sealed);
        assertEquals(0, put.exit(), put.err());

        byte[] storedBytes = Files.readAllBytes(stored);
        assertEquals(GcmStreams.ciphertextLength(plain.length), storedBytes.length, "the stored file's length");
        assertFalse(Arrays.equals(Arrays.copyOfRange(storedBytes, GcmStreams.HEADER_LENGTH, GcmStreams.HEADER_LENGTH + CHUNK),
                Arrays.copyOf(plain, CHUNK)), "the stored file holds the plaintext");
        assertArrayEquals(plain, decrypt(storedBytes), "the stored file is the sealed plaintext");
        try (var listing = Files.list(dir.resolve("sealed"))) {
            assertEquals(List.of("plain.bin"), listing.map(p -> p.getFileName().toString())
                    .filter(n -> !n.endsWith(".crc")).toList(), "put left no temporary file");
        }

        Run cat = fs("-cat", sealed);
        assertEquals(0, cat.exit(), cat.err());
        assertArrayEquals(plain, cat.out(), "-cat prints the plaintext, exactly");

        Run ls = fs("-ls", sealedDir);
        assertEquals(0, ls.exit(), ls.err());
        String line = ls.outText().lines().filter(l -> l.endsWith("/plain.bin")).findFirst()
                .orElseThrow(() -> new AssertionError("not listed: " + ls.outText()));
        // permissions, replication, owner, group, length, date, time, path
        assertEquals(String.valueOf(plain.length), line.trim().split("\\s+")[4], line);
        assertTrue(line.endsWith(sealed.replace("sfile://", "sfile:")) || line.endsWith(sealed), line);

        Path back = dir.resolve("back.bin");
        Run get = fs("-get", sealed, back.toUri().toString());
        assertEquals(0, get.exit(), get.err());
        assertArrayEquals(plain, Files.readAllBytes(back), "-get gives back the plaintext");

        // One bit flipped in chunk 3, written through the local file system so that its .crc
        // matches: only sealpipe can notice.
        int tampered = 3;
        storedBytes[GcmStreams.HEADER_LENGTH + tampered * (CHUNK + 16) + 77] ^= 1;
        FileSystem localFs = FileSystem.getLocal(new Configuration());
        try (FSDataOutputStream out = localFs.create(new org.apache.hadoop.fs.Path(stored.toUri()), true)) {
            out.write(storedBytes);
        }
        Run tamperedCat = fs("-cat", sealed);
        assertNotEquals(0, tamperedCat.exit(), "exit code of -cat of a tampered file");
        assertTrue(tamperedCat.err().startsWith("cat: "), tamperedCat.err());
        assertTrue(tamperedCat.err().contains(dir.resolve("sealed").resolve("plain.bin").toString())
                && tamperedCat.err().contains("chunk " + tampered), tamperedCat.err());
        byte[] printed = tamperedCat.out();
        assertTrue(printed.length <= tampered * CHUNK, printed.length + " bytes printed: some from the tampered chunk");
        assertArrayEquals(Arrays.copyOf(plain, printed.length), printed, "what was printed before the failure");
    }

    private byte[] decrypt(byte[] stored) throws IOException {
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        GcmStreams key;
        try {
            key = GcmStreams.builder().key(provider.getCurrentKey(KEY).getMaterial()).build();
        } finally {
            provider.close();
        }
        try (InputStream in = key.decrypt(new ByteArrayInputStream(stored))) {
            return in.readAllBytes();
        } finally {
            key.destroy();
        }
    }
}
