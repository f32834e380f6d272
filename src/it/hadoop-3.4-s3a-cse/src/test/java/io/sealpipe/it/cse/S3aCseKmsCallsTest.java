package io.sealpipe.it.cse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.AwsEnvelopeKms;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.AwsKmsServer;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;

/**
 * S3A's client-side encryption (CSE-KMS, Hadoop 3.4.2 with the Amazon S3 Encryption Client 3)
 * and sealed files under an AWS KMS key (envelope mode, {@link AwsEnvelopeKms}), side by side on
 * one S3Proxy and one local-kms: the same files written, read whole and read at positions, the
 * KMS calls of each counted at the server. S3A has no setting for the KMS's endpoint: the AWS
 * SDK's {@code aws.endpointUrlKms} system property points its KMS client at the server. Written
 * to target/cse-kms-calls.txt.
 */
class S3aCseKmsCallsTest {
    private static final int FILES = 20;
    private static final int LENGTH = 100_000;
    private static final long[] POSITIONS = {10, 40_000, 80_000};

    private static byte[] data(int i) {
        byte[] b = new byte[LENGTH];
        new Random(i).nextBytes(b);
        return b;
    }

    /**
     * KMS calls of one side: GenerateDataKey and Decrypt for writing, Decrypt for another file
     * system reading the files whole, and reading 3 positions in each with the random read
     * policy (a ranged GET each).
     */
    private record Calls(int writeGenerate, int writeDecrypt, int readDecrypt, int positionedDecrypt) {
        @Override
        public String toString() {
            return "write " + FILES + " files: GenerateDataKey " + writeGenerate + ", Decrypt " + writeDecrypt
                    + "; another file system reads them whole: Decrypt " + readDecrypt + "; reads " + POSITIONS.length
                    + " positions in each, random read policy: Decrypt " + positionedDecrypt;
        }
    }

    @Test
    void kmsCallsOfS3aClientSideEncryptionAndOfSealedFiles() throws Exception {
        try (S3Server s3 = S3Server.start();
                AwsKmsServer kms = AwsKmsServer.start(java.nio.file.Path.of("target", "local-kms").toAbsolutePath())) {
            System.setProperty("aws.endpointUrlKms", kms.endpoint());

            Configuration cse = new Configuration();
            s3.configure(cse);
            cse.setBoolean("fs.s3a.impl.disable.cache", true);
            cse.set("fs.s3a.encryption.algorithm", "CSE-KMS");
            cse.set("fs.s3a.encryption.key", AwsKmsServer.ALIAS);
            cse.set("fs.s3a.encryption.cse.kms.region", AwsKmsServer.REGION);
            Calls cseCalls;
            String tamperedRanged;
            String tamperedWhole;
            try (FileSystem fs = FileSystem.get(URI.create("s3a://" + S3Server.BUCKET + "/"), cse);
                    FileSystem reader = FileSystem.get(URI.create("s3a://" + S3Server.BUCKET + "/"), cse)) {
                cseCalls = run(fs, reader, "s3a://" + S3Server.BUCKET + "/cse", kms);
                for (FileStatus status : fs.listStatus(new Path("s3a://" + S3Server.BUCKET + "/cse"))) {
                    assertEquals(LENGTH, status.getLen(), "S3A CSE lists the plaintext length: " + status.getPath());
                }
                // A byte changed in the stored object: a whole read fails (the GCM tag), and a
                // ranged read returns the changed plaintext, unauthenticated.
                s3.flipStoredByte("cse/part-1", 50_000);
                byte[] range = new byte[100];
                try (FSDataInputStream in = randomRead(reader, new Path("s3a://" + S3Server.BUCKET + "/cse/part-1"))) {
                    in.readFully(49_950, range);
                }
                byte[] expected = Arrays.copyOfRange(data(1), 49_950, 50_050);
                assertFalse(Arrays.equals(expected, range), "S3A CSE's ranged read returns the tampered bytes");
                expected[50] ^= (byte) 0xff;
                assertArrayEquals(expected, range, "exactly the flipped byte, flipped in the plaintext: no tag checked");
                tamperedRanged = "a ranged read of a tampered object returns the changed byte, no error";
                try (InputStream in = reader.open(new Path("s3a://" + S3Server.BUCKET + "/cse/part-1"))) {
                    byte[] whole = in.readAllBytes();
                    byte[] flipped = data(1);
                    flipped[50_000] ^= (byte) 0xff;
                    tamperedWhole = Arrays.equals(flipped, whole)
                            ? "a whole read of it returns the changed byte, no error (S3A reads with ranged GETs)"
                            : "a whole read of it returns other bytes, no error";
                } catch (IOException e) {
                    tamperedWhole = "a whole read of it fails (" + e.getClass().getSimpleName() + ")";
                }
            }

            Configuration plain = new Configuration();
            s3.configure(plain);
            plain.setBoolean("fs.s3a.impl.disable.cache", true);
            try (FileSystem fs = FileSystem.get(URI.create("s3a://" + S3Server.BUCKET + "/"), plain)) {
                byte[] stored;
                try (InputStream in = fs.open(new Path("s3a://" + S3Server.BUCKET + "/cse/part-0"))) {
                    stored = in.readAllBytes();
                }
                assertEquals(LENGTH + 16, stored.length, "S3A CSE stores the ciphertext and a 16-byte tag");
                assertFalse(Arrays.equals(data(0), Arrays.copyOf(stored, LENGTH)), "a positive control: CSE encrypted");
            }

            Configuration sealed = new Configuration();
            s3.configure(sealed);
            sealed.setBoolean("fs.s3a.impl.disable.cache", true);
            sealed.setBoolean("fs.ss3a.impl.disable.cache", true);
            sealed.set("fs.ss3a.impl", SealedFileSystem.class.getName());
            sealed.set(SealedFileSystem.wrapsKey("ss3a"), "s3a");
            sealed.set("sealpipe.fs.key.mode", "envelope");
            sealed.set(SealedFileSystem.KMS_CLASS, AwsEnvelopeKms.class.getName());
            sealed.set(SealedFileSystem.KEY_NAME, AwsKmsServer.ALIAS);
            sealed.set(AwsEnvelopeKms.ENDPOINT, kms.endpoint());
            Calls sealedCalls;
            String sealedTampered;
            try (FileSystem fs = FileSystem.get(URI.create("ss3a://" + S3Server.BUCKET + "/"), sealed);
                    FileSystem reader = FileSystem.get(URI.create("ss3a://" + S3Server.BUCKET + "/"), sealed)) {
                sealedCalls = run(fs, reader, "ss3a://" + S3Server.BUCKET + "/sealed", kms);
                s3.flipStoredByte("sealed/part-1", 512 + 50_000);
                try (FSDataInputStream in = randomRead(reader, new Path("ss3a://" + S3Server.BUCKET + "/sealed/part-1"))) {
                    in.readFully(49_950, new byte[100]);
                    sealedTampered = "a ranged read of a tampered object returns it, no error";
                } catch (IOException e) {
                    sealedTampered = "a ranged read of a tampered object fails (" + e.getClass().getSimpleName() + ")";
                }
            }

            List<String> report = List.of(
                    "S3A CSE-KMS (Hadoop 3.4.2, S3 Encryption Client 3.1.3): " + cseCalls + "; " + tamperedRanged + "; "
                            + tamperedWhole,
                    "sealed files, AwsEnvelopeKms: " + sealedCalls + "; " + sealedTampered);
            Files.write(java.nio.file.Path.of("target", "cse-kms-calls.txt"), report);
            report.forEach(System.out::println);
            assertEquals(FILES, cseCalls.writeGenerate(), "S3A CSE: one GenerateDataKey per object written");
            assertTrue(cseCalls.readDecrypt() >= FILES, "S3A CSE: a Decrypt per object read at least");
            assertTrue(sealedCalls.writeGenerate() + sealedCalls.writeDecrypt() + sealedCalls.readDecrypt()
                    + sealedCalls.positionedDecrypt() <= 2, "sealed: " + sealedCalls);
            assertTrue(sealedTampered.contains("fails (StreamAuthenticationException)"), sealedTampered);
        } finally {
            System.clearProperty("aws.endpointUrlKms");
        }
    }

    /** Opens {@code path} with the random read policy: a ranged GET per read. */
    private static FSDataInputStream randomRead(FileSystem fs, Path path) throws IOException {
        try {
            return fs.openFile(path).opt("fs.option.openfile.read.policy", "random").build().get();
        } catch (InterruptedException | java.util.concurrent.ExecutionException e) {
            throw new IOException(e);
        }
    }

    /**
     * Writes the files under {@code root} with {@code fs}, reads them whole with {@code reader},
     * then at positions, counting KMS calls at the server.
     */
    private static Calls run(FileSystem fs, FileSystem reader, String root, AwsKmsServer kms) throws IOException {
        int generate = kms.requests("GenerateDataKey");
        int decrypt = kms.requests("Decrypt");
        for (int i = 0; i < FILES; i++) {
            try (FSDataOutputStream out = fs.create(new Path(root + "/part-" + i), true)) {
                out.write(data(i));
            }
        }
        int writeGenerate = kms.requests("GenerateDataKey") - generate;
        int writeDecrypt = kms.requests("Decrypt") - decrypt;
        decrypt = kms.requests("Decrypt");
        for (int i = 0; i < FILES; i++) {
            try (InputStream in = reader.open(new Path(root + "/part-" + i))) {
                assertArrayEquals(data(i), in.readAllBytes(), root + "/part-" + i);
            }
        }
        int readDecrypt = kms.requests("Decrypt") - decrypt;
        decrypt = kms.requests("Decrypt");
        for (int i = 0; i < FILES; i++) {
            byte[] expected = data(i);
            try (FSDataInputStream in = randomRead(reader, new Path(root + "/part-" + i))) {
                for (long position : POSITIONS) {
                    byte[] b = new byte[100];
                    in.readFully(position, b);
                    assertArrayEquals(Arrays.copyOfRange(expected, (int) position, (int) position + 100), b);
                }
            }
        }
        int positionedDecrypt = kms.requests("Decrypt") - decrypt;
        return new Calls(writeGenerate, writeDecrypt, readDecrypt, positionedDecrypt);
    }
}
