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

    /**
     * The KMS is chosen by --kms: contradictory options are usage errors (exit 2) before any KMS
     * call, and a file whose data key another kind of KMS wrapped says which to give, OUT untouched.
     */
    @Test
    void theKmsOptionsAreCheckedAndAFileOfAnotherKmsKindSaysWhichToGive() throws Exception {
        Path in = Files.writeString(dir.resolve("text"), "some text\n");
        String[][] wrong = {
            {"--kms", "vault", "--key-provider", keystore.toString()},
            {"--kms", "aws", "--key-provider", keystore.toString()},
            {"--kms-region", "eu-west-2", "--key-provider", keystore.toString()},
            {"--kms", "hadoop"},
        };
        for (String[] options : wrong) {
            java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("encrypt", "--key-name", "data",
                    "--key-mode", "envelope"));
            args.addAll(java.util.List.of(options));
            args.addAll(java.util.List.of(in.toString(), dir.resolve("never").toString()));
            Result refused = CliRun.run(args.toArray(String[]::new));
            assertEquals(2, refused.code(), String.join(" ", options) + ": " + refused.err());
            assertTrue(refused.err().contains("--kms") || refused.err().contains("--key-provider"), refused.err());
            assertFalse(refused.err().contains("vault"), "a usage error repeats no value typed: " + refused.err());
            assertFalse(Files.exists(dir.resolve("never")));
        }
        Result direct = CliRun.run("encrypt", "--kms", "aws", "--key-name", "alias/data", in.toString(),
                dir.resolve("never").toString());
        assertEquals(2, direct.code(), direct.err());
        assertTrue(direct.err().contains("--key-mode envelope"), direct.err());

        Result encrypt = CliRun.run("encrypt", "--key-provider", keystore.toString(), "--key-name", "data", "--key-mode",
                "envelope", in.toString(), dir.resolve("e").toString());
        assertEquals(0, encrypt.code(), encrypt.err());
        byte[] stored = Files.readAllBytes(dir.resolve("e"));
        stored[9] = Envelope.KIND_AWS; // as if AWS KMS had wrapped its data key
        Files.write(dir.resolve("e"), stored);
        Result other = CliRun.run("decrypt", "--key-provider", keystore.toString(), "--key-name", "data",
                dir.resolve("e").toString(), dir.resolve("e-out").toString());
        assertEquals(1, other.code(), other.out());
        assertTrue(other.err().contains("kind 2, AWS KMS") && other.err().contains("give --kms aws"), other.err());
        assertFalse(Files.exists(dir.resolve("e-out")), "no OUT");
    }
}
