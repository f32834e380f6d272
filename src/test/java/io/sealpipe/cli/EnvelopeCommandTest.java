package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.cli.CliRun.Result;
import io.sealpipe.internal.Envelope;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code encrypt --key-mode envelope} and {@code decrypt} of envelope files, with a JCEKS
 * keystore's key through Hadoop's default crypto extension (a KMS in production: the
 * integration project's {@code KmsCliTest}): the CLI and the sealed file system read each
 * other's envelope files, compressed ones too, and a damaged envelope fails with OUT untouched.
 */
class EnvelopeCommandTest {
    @TempDir
    Path dir;

    private URI keystore;

    @BeforeEach
    void key() throws Exception {
        keystore = EnvelopeFixture.keystoreWithKey(dir);
    }

    @Test
    void theCliAndTheSealedFileSystemReadEachOthersEnvelopeFiles() throws Exception {
        byte[] plain = new byte[70_000];
        new Random(5).nextBytes(plain);
        Path in = Files.write(dir.resolve("plain"), plain);
        Result encrypt = CliRun.run("encrypt", "--key-provider", keystore.toString(), "--key-name", "data", "--key-mode",
                "envelope", in.toString(), dir.resolve("by-cli").toString());
        assertEquals(0, encrypt.code(), encrypt.err());
        assertEquals("data@0", Envelope.parse(Files.readAllBytes(dir.resolve("by-cli"))).versionName());

        Result decrypt = CliRun.run("decrypt", "--key-provider", keystore.toString(), "--key-name", "data",
                dir.resolve("by-cli").toString(), dir.resolve("back").toString());
        assertEquals(0, decrypt.code(), decrypt.err());
        assertArrayEquals(plain, Files.readAllBytes(dir.resolve("back")));

        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), EnvelopeFixture.sealedConf(keystore))) {
            try (InputStream read = fs.open(new org.apache.hadoop.fs.Path("sfile://" + dir.resolve("by-cli")))) {
                assertArrayEquals(plain, read.readAllBytes(), "the file system reads the CLI's file");
            }
            try (OutputStream out = fs.create(new org.apache.hadoop.fs.Path("sfile://" + dir.resolve("by-fs")))) {
                out.write(plain);
            }
        }
        Result fromFs = CliRun.run("decrypt", "--key-provider", keystore.toString(), "--key-name", "data",
                dir.resolve("by-fs").toString(), dir.resolve("back-fs").toString());
        assertEquals(0, fromFs.code(), fromFs.err());
        assertArrayEquals(plain, Files.readAllBytes(dir.resolve("back-fs")), "the CLI reads the file system's file");
    }

    @Test
    void aCompressedEnvelopeFileSaysSoAndADamagedOneFailsWithOutUntouched() throws Exception {
        Path in = Files.writeString(dir.resolve("text"), "a line of a log\n".repeat(10_000));
        Result encrypt = CliRun.run("encrypt", "--key-provider", keystore.toString(), "--key-name", "data", "--key-mode",
                "envelope", "--compress", "snappy", in.toString(), dir.resolve("z").toString());
        assertEquals(0, encrypt.code(), encrypt.err());
        byte[] stored = Files.readAllBytes(dir.resolve("z"));
        assertTrue(Envelope.parse(stored).compressed());
        Result decrypt = CliRun.run("decrypt", "--key-provider", keystore.toString(), "--key-name", "data",
                dir.resolve("z").toString(), dir.resolve("z-back").toString());
        assertEquals(0, decrypt.code(), decrypt.err());
        assertArrayEquals(Files.readAllBytes(in), Files.readAllBytes(dir.resolve("z-back")), "decompressed: the envelope says");

        stored[10] = 0; // the content flag, part of the message's context
        Files.write(dir.resolve("z"), stored);
        Result damaged = CliRun.run("decrypt", "--key-provider", keystore.toString(), "--key-name", "data",
                dir.resolve("z").toString(), dir.resolve("z-out").toString());
        assertEquals(1, damaged.code(), damaged.out());
        assertTrue(damaged.err().contains("key commitment"), damaged.err());
        assertFalse(Files.exists(dir.resolve("z-out")), "no OUT");

        stored[8] = 7; // an envelope version this sealpipe does not know
        Files.write(dir.resolve("z"), stored);
        Result unknown = CliRun.run("decrypt", "--key-provider", keystore.toString(), "--key-name", "data",
                dir.resolve("z").toString(), dir.resolve("z-out").toString());
        assertEquals(1, unknown.code(), unknown.out());
        assertTrue(unknown.err().contains("format version 7"), unknown.err());
        assertFalse(Files.exists(dir.resolve("z-out")), "no OUT");
    }
}
