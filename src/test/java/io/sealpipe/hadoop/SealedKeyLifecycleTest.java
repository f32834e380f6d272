package io.sealpipe.hadoop;

import static io.sealpipe.hadoop.SealedFixture.data;
import static io.sealpipe.hadoop.SealedFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.KeyRaces;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sealed file system never seals a file under a key its owner does not hold: not when
 * {@code FileSystem.close()} (Hadoop's shutdown hook, or any code closing the shared instance)
 * destroys the keys while another thread creates and writes a file, and not after the key was
 * deleted and created again under the same name.
 */
@Timeout(600) // a safety net against a deadlocked fix only: no test waits for time
class SealedKeyLifecycleTest {
    private static final byte[] PLAIN = data(40_000, 26); // two full chunks and a final one

    @TempDir
    java.nio.file.Path dir;

    private Path sealedPath(String name) {
        return new Path("sfile://" + dir.resolve(name).toAbsolutePath());
    }

    /**
     * Thousands of rounds, each a new file system instance whose {@code close()} races a
     * {@code create}, {@code write} and {@code close} of one file, both released by one latch.
     * Each round ends with the file sealed whole under the real key, or with the writer failed
     * by an {@code IOException} and the stored bytes (if any) verifying under no key that a torn
     * read could give. The keys are in a {@code user:///} provider (the current user's
     * credentials), which is read in microseconds where a JCEKS entry takes a slow password-based
     * decryption per instance.
     */
    @Test
    void closeRacingCreateWriteCloseSealsUnderTheRealKeyOrFailsWithIOException() throws Exception {
        URI provider = URI.create("user:///");
        SealedFixture.createKey(provider, "race", 256);
        byte[] key = material(provider, "race");
        Configuration conf = SealedFixture.sealedConf(provider);
        conf.set(SealedFileSystem.KEY_NAME, "race");
        int rounds = 3_000;
        int sealed = 0;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < rounds; round++) {
                FileSystem fs = FileSystem.newInstance(URI.create("sfile:///"), conf);
                Path path = sealedPath("r" + round);
                KeyRaces.Outcome writer = KeyRaces.race(pool, () -> {
                    try (FSDataOutputStream out = fs.create(path, true)) {
                        out.write(PLAIN);
                    }
                }, fs::close);
                java.nio.file.Path stored = dir.resolve("r" + round);
                byte[] bytes = Files.exists(stored) ? Files.readAllBytes(stored) : new byte[0];
                for (byte[] torn : KeyRaces.tornKeys(key)) {
                    if (KeyRaces.opens(torn, bytes, new byte[0])) {
                        fail("round " + round + ": the file verifies under a zeroed or half-zeroed key; the writer " + writer);
                    }
                }
                if (writer.failure() == null) {
                    assertArrayEquals(PLAIN, KeyRaces.open(key, bytes, new byte[0]), "round " + round);
                    sealed++;
                } else {
                    if (!(writer.failure() instanceof IOException)) {
                        throw new AssertionError("round " + round + ": the writer failed with other than an IOException",
                                writer.failure());
                    }
                    assertFalse(KeyRaces.opens(key, bytes, new byte[0]), "round " + round + ": a failed writer left a file"
                            + " that verifies");
                }
                Files.deleteIfExists(stored);
                Files.deleteIfExists(dir.resolve(".r" + round + ".crc"));
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.printf("FileSystem.close race: %d of %d files sealed, the others refused%n", sealed, rounds);
    }

    /**
     * {@code hadoop key delete data} and {@code hadoop key create data} (whose first version is
     * {@code data@0} again, with new material) under a long-lived file system that reads the
     * provider for every file it writes: while the key is deleted nothing is written, then new
     * files use the new material (a fresh instance reads them), and the old file fails naming the
     * key, in the long-lived instance and in a fresh one.
     */
    @Test
    void aKeyDeletedAndCreatedAgainIsNeverUsedToSealWithItsOldMaterial() throws IOException {
        SealedFixture fixture = new SealedFixture(dir);
        Configuration conf = new Configuration(fixture.conf);
        conf.setLong(SealedFileSystem.KEY_REFRESH_SECONDS, 0);
        FileSystem longLived = FileSystem.newInstance(URI.create("sfile:///"), conf);
        try {
            byte[] oldContent = data(20_000, 1);
            write(longLived, fixture.sealedPath("old"), oldContent);
            byte[] oldMaterial = material(fixture.keystore, SealedFixture.KEY);

            KeyProvider admin = fixture.provider();
            admin.deleteKey(SealedFixture.KEY);
            admin.flush();
            admin.close();
            IOException deleted = assertThrows(IOException.class,
                    () -> write(longLived, fixture.sealedPath("meanwhile"), oldContent));
            assertTrue(deleted.getMessage().contains("the key 'data' in " + fixture.keystore + " has no current version"),
                    deleted.getMessage());
            assertFalse(Files.exists(dir.resolve("meanwhile")), "a file written while the key was deleted");

            fixture.createKey(SealedFixture.KEY, 256);
            byte[] newMaterial = material(fixture.keystore, SealedFixture.KEY);
            assertFalse(Arrays.equals(oldMaterial, newMaterial));
            byte[] newContent = data(20_000, 2);
            write(longLived, fixture.sealedPath("new"), newContent);

            byte[] stored = Files.readAllBytes(dir.resolve("new"));
            assertArrayEquals(newContent, KeyRaces.open(newMaterial, stored, new byte[0]), "sealed under the new material");
            assertFalse(KeyRaces.opens(oldMaterial, stored, new byte[0]), "sealed under the deleted material");
            FileSystem fresh = FileSystem.newInstance(URI.create("sfile:///"), conf);
            try {
                assertArrayEquals(newContent, readAll(fresh, fixture.sealedPath("new")));
                assertOldFileFails(fresh, fixture);
            } finally {
                fresh.close();
            }
            assertOldFileFails(longLived, fixture);
            assertArrayEquals(newContent, readAll(longLived, fixture.sealedPath("new")));
        } finally {
            longLived.close();
        }
    }

    private static void assertOldFileFails(FileSystem fs, SealedFixture fixture) {
        IOException e = assertThrows(IOException.class, () -> readAll(fs, fixture.sealedPath("old")));
        assertTrue(e.getMessage().contains("no version of the key 'data' in " + fixture.keystore + " matches"), e.getMessage());
        assertTrue(e.getMessage().contains("(tried data@0)"), e.getMessage());
    }

    private static byte[] readAll(FileSystem fs, Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    private static byte[] material(URI providerUri, String name) throws IOException {
        KeyProvider provider = KeyProviderFactory.get(providerUri, new Configuration(false));
        try {
            return provider.getCurrentKey(name).getMaterial().clone();
        } finally {
            provider.close();
        }
    }
}
