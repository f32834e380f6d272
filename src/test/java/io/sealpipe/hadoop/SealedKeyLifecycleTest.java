package io.sealpipe.hadoop;

import static io.sealpipe.hadoop.SealedFixture.data;
import static io.sealpipe.hadoop.SealedFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.KeyRaces;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The sealed file system never seals a file under a key its owner does not hold: not when
 * {@code FileSystem.close()} (Hadoop's shutdown hook, or any code closing the shared instance)
 * destroys the keys while another thread creates and writes a file, and not after the key was
 * deleted and created again under the same name.
 */
@Timeout(600) // a safety net against a deadlocked fix only: no test waits for time
class SealedKeyLifecycleTest {
    private static final byte[] PLAIN = data(100_000, 26); // six full chunks and a final one: some are passed on before close

    @TempDir
    java.nio.file.Path dir;

    /** The JCEKS keystore with the key {@value SealedFixture#KEY}, for the tests that replace or delete it. */
    private SealedFixture fixture;

    @BeforeEach
    void makeKeystore() throws IOException {
        fixture = new SealedFixture(dir);
    }

    private Path sealedPath(String name) {
        return new Path("sfile://" + dir.resolve(name).toAbsolutePath());
    }

    /** Where a forced {@code FileSystem.close()} lands in a writer's create, write and close. */
    enum Stage {
        BEFORE_CREATE, AFTER_CREATE, MID_WRITE, AFTER_WRITE, AFTER_CLOSE
    }

    /**
     * Each outcome of the race below, forced: the file system closed by another thread (started
     * and joined) at each stage of one writer. Closed before the create, the create fails and
     * makes no file; closed while the file is open (created, half written, all written), a write
     * or the close fails with an {@code IOException} and what is stored verifies under no key;
     * closed after, the file is sealed whole under the real key.
     */
    @ParameterizedTest
    @EnumSource(Stage.class)
    void closeAtEachStageOfAWriterSealsOrFailsWithIOException(Stage stage) throws Exception {
        byte[] key = material(fixture.keystore, SealedFixture.KEY);
        FileSystem fs = FileSystem.newInstance(URI.create("sfile:///"), fixture.conf);
        write(fs, fixture.sealedPath("warm"), new byte[1]); // reads the key versions
        Path path = fixture.sealedPath("w");
        IOException failure = null;
        try {
            closeAt(stage, Stage.BEFORE_CREATE, fs);
            try (FSDataOutputStream out = fs.create(path, true)) {
                closeAt(stage, Stage.AFTER_CREATE, fs);
                out.write(PLAIN, 0, PLAIN.length / 2);
                closeAt(stage, Stage.MID_WRITE, fs);
                out.write(PLAIN, PLAIN.length / 2, PLAIN.length - PLAIN.length / 2);
                closeAt(stage, Stage.AFTER_WRITE, fs);
            }
            closeAt(stage, Stage.AFTER_CLOSE, fs);
        } catch (IOException e) {
            failure = e;
        } finally {
            fs.close();
        }
        java.nio.file.Path stored = dir.resolve("w");
        byte[] bytes = Files.exists(stored) ? Files.readAllBytes(stored) : new byte[0];
        for (byte[] torn : KeyRaces.tornKeys(key)) {
            assertFalse(KeyRaces.opens(torn, bytes, new byte[0]), "the file verifies under a zeroed or half-zeroed key");
        }
        if (stage == Stage.AFTER_CLOSE) {
            assertNull(failure, "the writer failed");
            assertArrayEquals(PLAIN, KeyRaces.open(key, bytes, new byte[0]));
            return;
        }
        assertTrue(failure != null && failure.getMessage().contains("closed"), "the writer, closed " + stage + ": " + failure);
        assertFalse(KeyRaces.opens(key, bytes, new byte[0]), "a failed writer left a file that verifies");
        if (stage == Stage.BEFORE_CREATE) {
            assertFalse(Files.exists(stored), "a create after the close made a file");
        }
    }

    /** Closes {@code fs} on another thread, and waits for it, if {@code stage} is {@code at}. */
    private static void closeAt(Stage stage, Stage at, FileSystem fs) throws Exception {
        if (stage != at) {
            return;
        }
        ExecutorService closer = Executors.newSingleThreadExecutor();
        try {
            closer.submit(() -> {
                fs.close();
                return null;
            }).get();
        } finally {
            closer.shutdown();
        }
    }

    /**
     * Thousands of rounds, each a new file system instance whose {@code close()} races a
     * {@code create}, {@code write} and {@code close} of one file, both released by one latch.
     * Each round ends with the file sealed whole under the real key, or with the writer failed
     * by an {@code IOException} and the stored bytes (none, or a file left unsealed) verifying
     * under no key that a torn read could give. The keys are in a {@code user:///} provider (the
     * current user's credentials), which is read in microseconds where a JCEKS entry takes a
     * slow password-based decryption per instance. How the rounds split between sealed and
     * refused depends on the scheduling; {@link #closeAtEachStageOfAWriterSealsOrFailsWithIOException}
     * forces each outcome.
     */
    @Test
    void closeRacingCreateWriteCloseSealsUnderTheRealKeyOrFailsWithIOException() throws Exception {
        URI provider = URI.create("user:///");
        String name = "race-" + java.util.UUID.randomUUID(); // the user's credentials last as long as the JVM
        SealedFixture.createKey(provider, name, 256);
        byte[] key = material(provider, name);
        Configuration conf = SealedFixture.sealedConf(provider);
        conf.set(SealedFileSystem.KEY_NAME, name);
        int rounds = 2_000;
        int sealed = 0;
        int leftUnsealed = 0;
        int[][] outcomes = new int[3][2];
        ExecutorService pool = Executors.newFixedThreadPool(2);
        java.util.Random spins = new java.util.Random(26);
        try {
            for (int round = 0; round < rounds; round++) {
                FileSystem fs = FileSystem.newInstance(URI.create("sfile:///"), conf);
                write(fs, sealedPath("warm"), new byte[1]); // reads the key versions: the race is not about the provider
                Path path = sealedPath("r" + round);
                // The close starts with the writer's create, after it, or after the write, and
                // then after a random number of spins, so that it meets the writer at every stage.
                CountDownLatch created = new CountDownLatch(1);
                CountDownLatch written = new CountDownLatch(1);
                CountDownLatch meet = List.of(new CountDownLatch(0), created, written).get(round % 3);
                KeyRaces.Outcome writer = KeyRaces.race(pool, () -> {
                    try (FSDataOutputStream out = fs.create(path, true)) {
                        created.countDown();
                        out.write(PLAIN);
                        written.countDown();
                    } finally {
                        created.countDown(); // a writer that failed early never keeps the close waiting
                        written.countDown();
                    }
                }, () -> {
                    meet.await();
                    fs.close();
                }, spins.nextInt(1 << 14));
                outcomes[round % 3][writer.failure() == null ? 0 : 1]++;
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
                    leftUnsealed += bytes.length > 0 ? 1 : 0;
                }
                Files.deleteIfExists(stored);
                Files.deleteIfExists(dir.resolve(".r" + round + ".crc"));
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.printf("FileSystem.close race: %d of %d files sealed; of the writers refused, %d left an unsealed file;"
                + " sealed/refused with the close from the create on %d/%d, after the create %d/%d, after the write %d/%d%n",
                sealed, rounds, leftUnsealed, outcomes[0][0], outcomes[0][1], outcomes[1][0], outcomes[1][1], outcomes[2][0],
                outcomes[2][1]);
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
        FileSystem longLived = everyFileReadsTheProvider(fixture);
        try {
            byte[] oldContent = data(20_000, 1);
            write(longLived, fixture.sealedPath("old"), oldContent);
            byte[] oldMaterial = material(fixture.keystore, SealedFixture.KEY);

            deleteKey(fixture);
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
            FileSystem fresh = everyFileReadsTheProvider(fixture);
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

    /**
     * The same with nothing in between: the key deleted and created again at once, before the
     * next file. Only its material tells the new {@code data@0} from the old one.
     */
    @Test
    void aKeyReplacedUnderTheSameVersionNameIsToldByItsMaterial() throws IOException {
        try (FileSystem longLived = everyFileReadsTheProvider(fixture)) {
            byte[] oldContent = data(20_000, 1);
            write(longLived, fixture.sealedPath("old"), oldContent);
            byte[] oldMaterial = material(fixture.keystore, SealedFixture.KEY);
            replaceKey(fixture);
            byte[] newMaterial = material(fixture.keystore, SealedFixture.KEY);

            byte[] newContent = data(20_000, 2);
            write(longLived, fixture.sealedPath("new"), newContent);
            byte[] stored = Files.readAllBytes(dir.resolve("new"));
            assertArrayEquals(newContent, KeyRaces.open(newMaterial, stored, new byte[0]), "sealed under the new material");
            assertFalse(KeyRaces.opens(oldMaterial, stored, new byte[0]), "sealed under the deleted material");
            assertOldFileFails(longLived, fixture);
        }
    }

    /**
     * The key replaced after the file system was made and before its first file: the first file
     * is sealed under the new material (the provider made to check the key at start is not what
     * the first file reads).
     */
    @Test
    void aKeyReplacedBeforeTheFirstFileIsReadAfresh() throws IOException {
        try (FileSystem fs = everyFileReadsTheProvider(fixture)) {
            replaceKey(fixture);
            byte[] content = data(1000, 3);
            write(fs, fixture.sealedPath("first"), content);
            assertArrayEquals(content, KeyRaces.open(material(fixture.keystore, SealedFixture.KEY),
                    Files.readAllBytes(dir.resolve("first")), new byte[0]));
        }
    }

    /** A reader too sees a deletion at its next read of the provider: a deleted key reads nothing more. */
    @Test
    void aDeletedKeyNoLongerReads() throws IOException {
        try (FileSystem fs = everyFileReadsTheProvider(fixture)) {
            byte[] content = data(1000, 4);
            write(fs, fixture.sealedPath("f"), content);
            assertArrayEquals(content, readAll(fs, fixture.sealedPath("f")));
            deleteKey(fixture);
            IOException e = assertThrows(IOException.class, () -> readAll(fs, fixture.sealedPath("f")));
            assertTrue(e.getMessage().contains(fixture.sealedPath("f").toString()) && e.getMessage().contains(
                    "the key 'data' in " + fixture.keystore + " has no current version: it was deleted"), e.getMessage());
        }
    }

    /**
     * A provider that fails (here a keystore file that cannot be parsed, as a KMS that is down)
     * is not a deletion: files stay readable with the versions read before; {@code create} keeps
     * the version read before until the refresh period has passed (here: at once) and then fails
     * until the provider can be read again.
     */
    @Test
    void aProviderThatFailsKeepsTheVersionsReadBefore() throws IOException {
        try (FileSystem fs = everyFileReadsTheProvider(fixture)) {
            byte[] content = data(1000, 8);
            write(fs, fixture.sealedPath("f"), content);
            FileSystem cached = FileSystem.newInstance(URI.create("sfile:///"), fixture.conf); // refresh: the default
            write(cached, fixture.sealedPath("e"), content);
            java.nio.file.Path keystore = dir.resolve("keys.jceks");
            byte[] good = Files.readAllBytes(keystore);
            Files.write(keystore, "not a keystore".getBytes(java.nio.charset.StandardCharsets.US_ASCII));

            write(cached, fixture.sealedPath("h"), content); // within its period: the version read before
            assertArrayEquals(content, readAll(cached, fixture.sealedPath("h")));
            cached.close();

            assertArrayEquals(content, readAll(fs, fixture.sealedPath("f")), "readable with the versions read before");
            assertThrows(IOException.class, () -> write(fs, fixture.sealedPath("g"), content));
            assertFalse(Files.exists(dir.resolve("g")));

            Files.write(keystore, good);
            write(fs, fixture.sealedPath("g"), content);
            assertArrayEquals(content, readAll(fs, fixture.sealedPath("g")));
        }
    }

    /**
     * A file being written when its file system is closed fails at its next write and at close,
     * left unsealed: no reader accepts it, under the real key or any other. A create after the
     * close fails before making the file.
     */
    @Test
    void aFileBeingWrittenWhenTheFileSystemClosesIsLeftUnsealed() throws IOException {
        byte[] key = material(fixture.keystore, SealedFixture.KEY);
        FileSystem fs = FileSystem.newInstance(URI.create("sfile:///"), fixture.conf);
        FSDataOutputStream out = fs.create(fixture.sealedPath("w"), true);
        out.write(data(200_000, 5)); // more than the stream gathers before it passes chunks on
        fs.close();
        IOException write = assertThrows(IOException.class, () -> out.write(1));
        assertTrue(write.getMessage().contains("the sealed file system was closed while this file was being written"),
                write.getMessage());
        out.close(); // already abandoned by the failed write: nothing more to say
        byte[] stored = Files.readAllBytes(dir.resolve("w"));
        assertTrue(stored.length > 0, "the chunks passed on before the close stay");
        assertFalse(KeyRaces.opens(key, stored, new byte[0]), "an unsealed file verifies");

        FileSystem again = FileSystem.newInstance(URI.create("sfile:///"), fixture.conf);
        FSDataOutputStream second = again.create(fixture.sealedPath("v"), true);
        second.write(data(100, 6));
        again.close();
        IOException close = assertThrows(IOException.class, second::close);
        assertTrue(close.getMessage().contains("left unsealed"), close.getMessage());
        assertFalse(KeyRaces.opens(key, Files.readAllBytes(dir.resolve("v")), new byte[0]));

        IOException create = assertThrows(IOException.class, () -> fs.create(fixture.sealedPath("after"), true));
        assertTrue(create.getMessage().contains("the sealed file system was closed"), create.getMessage());
        assertFalse(Files.exists(dir.resolve("after")));
    }

    /**
     * Hadoop's shutdown hook closes every cached file system while it holds the {@code FileSystem}
     * cache's lock; a {@code create} that reads the key provider at that moment needs that lock
     * to make a {@code jceks://} provider. close() must not wait for that create: before, it
     * waited for the key versions' lock, which the create held, and both threads hung.
     */
    @Test
    void closeUnderTheCacheLockDoesNotWaitForACreateReadingTheProvider() throws Exception {
        FileSystem fs = everyFileReadsTheProvider(fixture);
        java.lang.reflect.Field cacheField = FileSystem.class.getDeclaredField("CACHE");
        cacheField.setAccessible(true);
        Object cache = cacheField.get(null);
        java.util.concurrent.atomic.AtomicReference<Throwable> created = new java.util.concurrent.atomic.AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                write(fs, fixture.sealedPath("c"), data(100, 7));
            } catch (Throwable t) {
                created.set(t);
            }
        }, "create-under-hook");
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        synchronized (cache) { // as Cache.closeAll holds it
            writer.start();
            while (writer.isAlive() && !blockedOn(threads.getThreadInfo(writer.getId()), cache)) {
                Thread.onSpinWait(); // until the create waits for the cache's lock (making the provider)
            }
            assertTrue(writer.isAlive(), "the create ended without waiting for the cache: " + created.get());
            fs.close(); // hung here before
        }
        writer.join();
        assertTrue(created.get() instanceof IOException, "the create after close: " + created.get());
        assertTrue(created.get().getMessage().contains("the sealed file system was closed"), created.get().getMessage());
        assertFalse(Files.exists(dir.resolve("c")));
    }

    /** A file system of its own over the fixture's key that reads the provider for every file. */
    private static FileSystem everyFileReadsTheProvider(SealedFixture fixture) throws IOException {
        Configuration conf = new Configuration(fixture.conf);
        conf.setLong(SealedFileSystem.KEY_REFRESH_SECONDS, 0);
        return FileSystem.newInstance(URI.create("sfile:///"), conf);
    }

    private static boolean blockedOn(java.lang.management.ThreadInfo info, Object lock) {
        return info != null && info.getThreadState() == Thread.State.BLOCKED && info.getLockInfo() != null
                && info.getLockInfo().getIdentityHashCode() == System.identityHashCode(lock);
    }

    /**
     * close() runs delete-on-exit (Hadoop's shutdown hook does so holding the cache's lock): it
     * needs no key, so it neither waits for the provider nor skips a file when the key is gone.
     * Here the key is deleted first and the files are compressed (whose status needs a key):
     * asking the provider would fail, and the file would silently stay.
     */
    @Test
    void deleteOnExitNeedsNoKey() throws IOException {
        Configuration conf = new Configuration(fixture.conf);
        conf.setLong(SealedFileSystem.KEY_REFRESH_SECONDS, 0);
        conf.set(SealedFileSystem.COMPRESS, "snappy");
        FileSystem fs = FileSystem.newInstance(URI.create("sfile:///"), conf);
        write(fs, fixture.sealedPath("temporary"), data(1000, 9));
        assertTrue(fs.deleteOnExit(fixture.sealedPath("temporary")));
        deleteKey(fixture);
        fs.close();
        assertFalse(Files.exists(dir.resolve("temporary")), "delete-on-exit skipped the file");
    }

    /**
     * A key found deleted is looked up again at the next file, whatever the refresh period: once
     * it is created again, files are written at once.
     */
    @Test
    void writingResumesAsSoonAsADeletedKeyIsCreatedAgain() throws IOException {
        try (FileSystem fs = FileSystem.newInstance(URI.create("sfile:///"), fixture.conf)) { // refresh: the default
            deleteKey(fixture);
            assertThrows(IOException.class, () -> write(fs, fixture.sealedPath("a"), data(10, 10)));
            fixture.createKey(SealedFixture.KEY, 256);
            byte[] content = data(10, 11);
            write(fs, fixture.sealedPath("a"), content);
            assertArrayEquals(content, KeyRaces.open(material(fixture.keystore, SealedFixture.KEY),
                    Files.readAllBytes(dir.resolve("a")), new byte[0]));
        }
    }

    private static void replaceKey(SealedFixture fixture) throws IOException {
        deleteKey(fixture);
        fixture.createKey(SealedFixture.KEY, 256);
    }

    private static void deleteKey(SealedFixture fixture) throws IOException {
        KeyProvider admin = fixture.provider();
        try {
            admin.deleteKey(SealedFixture.KEY);
            admin.flush();
        } finally {
            admin.close();
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
