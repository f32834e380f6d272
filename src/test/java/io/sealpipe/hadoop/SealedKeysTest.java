package io.sealpipe.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.hadoop.SealedKeys;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How {@link SealedKeys} reads its provider: how often (files that match no version do not each
 * read it), under which lock (none: a caller served by the versions kept never waits for another's
 * read), and what it leaves of the material the provider handed out (nothing). The provider is a
 * {@link FakeKeyProvider} that counts its reads and can hold one on a latch; the clock is the
 * test's, moved by hand.
 */
@Timeout(120) // a safety net only: no test waits for time; a caller made to wait for a held read hangs until here
class SealedKeysTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long REFRESH = 600 * SECOND;
    private static final long MISS_REFRESH = 5 * SECOND;

    private final AtomicLong clock = new AtomicLong(1_000 * SECOND);

    private SealedKeys keys(FakeKeyProvider.Store store) throws IOException {
        Configuration conf = new Configuration(false);
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, "kms://http@kms.example:9600/kms");
        conf.set(SealedFileSystem.KEY_NAME, store.name);
        conf.setLong(SealedFileSystem.KEY_REFRESH_SECONDS, REFRESH / SECOND);
        conf.setLong(SealedFileSystem.KEY_MISS_REFRESH_SECONDS, MISS_REFRESH / SECOND);
        return SealedKeys.load(conf, 1, store.providers(), clock::get);
    }

    private static byte[] material(int bytes, long seed) {
        byte[] material = new byte[bytes];
        new Random(seed).nextBytes(material);
        return material;
    }

    /** The header of a file sealed under {@code material}. */
    private static byte[] header(byte[] material) throws IOException {
        GcmStreams streams = GcmStreams.builder().key(material).build();
        ByteArrayOutputStream stored = new ByteArrayOutputStream();
        try (OutputStream out = streams.encrypt(stored)) {
            out.write(1);
        } finally {
            streams.destroy();
        }
        return Arrays.copyOf(stored.toByteArray(), GcmStreams.HEADER_LENGTH);
    }

    /** Opens the file of {@code header} as the file system does: the streams found, then destroyed. */
    private static Void opens(SealedKeys keys, byte[] header) throws IOException {
        keys.forReading(header, new Path("/data/f")).streams().destroy();
        return null;
    }

    /** Whether {@code keys} writes under {@code material}. */
    private static boolean writesUnder(SealedKeys keys, byte[] material) throws IOException {
        GcmStreams streams = keys.forWriting(false);
        try {
            ByteArrayOutputStream stored = new ByteArrayOutputStream();
            try (OutputStream out = streams.encrypt(stored)) {
                out.write(1);
            }
            GcmStreams expected = GcmStreams.builder().key(material).build();
            try {
                return expected.matchesHeader(Arrays.copyOf(stored.toByteArray(), GcmStreams.HEADER_LENGTH));
            } finally {
                expected.destroy();
            }
        } finally {
            streams.destroy();
        }
    }

    /** {@code call} in a thread of its own, started; {@code get()} joins it. */
    private static <T> FutureTask<T> inThread(String name, Callable<T> call) {
        FutureTask<T> task = new FutureTask<>(call);
        new Thread(task, name).start();
        return task;
    }

    private static void assertAllZero(List<byte[]> arrays, String what) {
        assertFalse(arrays.isEmpty(), "no material was handed out: " + what);
        for (byte[] array : arrays) {
            assertArrayEquals(new byte[array.length], array, what + ": a material array handed out is not zeroed");
        }
    }

    /**
     * A directory of another key's files (with {@code sealpipe.fs.compress=snappy} each status opens
     * its file): the first makes one read of the provider (a version rolled since is found at once),
     * the others within the interval none, and no provider is made for them; once the interval has
     * passed, the next such file reads again, and finds a version rolled meanwhile.
     */
    @Test
    void filesThatMatchNoVersionReadTheProviderAtMostOncePerInterval() throws Exception {
        byte[] v0 = material(32, 1);
        FakeKeyProvider.Store store = new FakeKeyProvider.Store("data", v0);
        try (SealedKeys keys = keys(store)) {
            opens(keys, header(v0)); // the first read
            int made = store.made.get();
            int reads = store.versionReads.get();
            byte[] foreign = header(material(32, 2));
            long firstMiss = clock.get();
            for (int i = 0; i < 20; i++) {
                Path path = new Path("/other/part-" + i);
                SealedKeys.NoVersionMatches e = assertThrows(SealedKeys.NoVersionMatches.class,
                        () -> keys.forReading(foreign, path), "a file of another key lists (its status catches this)");
                assertTrue(e.getMessage().startsWith(path + ": no version of the key 'data'"), e.getMessage());
                clock.addAndGet(MISS_REFRESH / 20); // 20 files within the interval
            }
            assertEquals(1, store.versionReads.get() - reads, "reads of the versions for 20 files of another key");
            assertEquals(1, store.made.get() - made, "providers made for 20 files of another key");

            byte[] v1 = material(32, 3);
            store.roll(v1); // by another process
            clock.set(firstMiss + MISS_REFRESH);
            opens(keys, header(v1));
            assertEquals(2, store.versionReads.get() - reads,
                    "a file of a version rolled since, once the interval has passed");
            assertEquals(2, store.made.get() - made);
            SealedKeys.NoVersionMatches e = assertThrows(SealedKeys.NoVersionMatches.class,
                    () -> keys.forReading(foreign, new Path("/other/again")));
            assertTrue(e.getMessage().contains(SealedFileSystem.KEY_MISS_REFRESH_SECONDS), e.getMessage());
            assertEquals(2, store.versionReads.get() - reads, "that read began the interval again");
            opens(keys, header(v0));
            assertTrue(writesUnder(keys, v1), "the rolled version writes");
        }
    }

    /**
     * A provider that goes down (a KMS outage) once the versions are stale: the first file opened
     * makes one read, which fails, and opens with the version kept; the files opened after it
     * within {@code sealpipe.fs.key.miss.refresh.seconds} open with it too and make no read (each
     * could wait for a KMS client's timeout), and a create fails at once with that read's failure;
     * once the interval has passed, the next caller reads again: with the provider back, creates work.
     */
    @Test
    void aFailedReadIsTriedAgainAtMostOncePerInterval() throws Exception {
        byte[] v0 = material(32, 1);
        FakeKeyProvider.Store store = new FakeKeyProvider.Store("data", v0);
        try (SealedKeys keys = keys(store)) {
            opens(keys, header(v0));
            int reads = store.versionReads.get();
            store.currentKeyFails = true;
            clock.addAndGet(REFRESH);
            long failedAt = clock.get();
            opens(keys, header(v0));
            assertEquals(1, store.versionReads.get() - reads, "the stale versions made a read, which failed");
            for (int i = 0; i < 20; i++) {
                clock.addAndGet(MISS_REFRESH / 40);
                opens(keys, header(v0));
            }
            IOException creating = assertThrows(IOException.class, () -> keys.forWriting(false));
            assertTrue(creating.getMessage().contains("connection refused"), creating.getMessage());
            assertTrue(creating.getMessage().contains(SealedFileSystem.KEY_MISS_REFRESH_SECONDS),
                    creating.getMessage());
            assertEquals(1, store.versionReads.get() - reads, "reads for 20 files and a create within the interval");

            store.currentKeyFails = false;
            clock.set(failedAt + MISS_REFRESH);
            assertTrue(writesUnder(keys, v0), "once the interval has passed, a create reads again, and works");
            assertEquals(2, store.versionReads.get() - reads);
        }
    }

    /**
     * While one caller is inside the provider's read (held on a latch), another opens a file of a
     * version kept and is done, joined before the read is let go: with the versions fresh (the
     * read is for a file of another key) and with them stale (the read is the periodic one).
     */
    @Test
    void aFileOfAKeptVersionOpensWhileAnotherCallerIsInsideTheProvider() throws Exception {
        byte[] v0 = material(32, 1);
        FakeKeyProvider.Store store = new FakeKeyProvider.Store("data", v0);
        byte[] foreign = header(material(32, 2));
        try (SealedKeys keys = keys(store)) {
            opens(keys, header(v0));
            for (boolean stale : new boolean[] {false, true}) {
                if (stale) {
                    clock.addAndGet(REFRESH);
                }
                int reads = store.versionReads.get();
                CountDownLatch entered = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                store.blockNextRead(entered, release);
                FutureTask<IOException> reader = inThread("reads-the-provider", () -> assertThrows(
                        SealedKeys.NoVersionMatches.class, () -> keys.forReading(foreign, new Path("/other/f"))));
                try {
                    entered.await(); // the reader is inside getKeyVersions
                    inThread("opens-a-kept-version", () -> opens(keys, header(v0))).get(); // hung here before (stale)
                } finally {
                    release.countDown();
                }
                reader.get();
                assertEquals(1, store.versionReads.get() - reads,
                        stale ? "the periodic read" : "the read for the other key's file");
            }
        }
    }

    /**
     * Callers that need a read while one is in progress wait for it and share it: a writer whose
     * versions are stale writes under the version that read found, a file of a version rolled
     * just before it opens, and one of another key fails; one read in all.
     */
    @Test
    void callersThatNeedAReadWhileOneIsInProgressShareIt() throws Exception {
        byte[] v0 = material(32, 1);
        FakeKeyProvider.Store store = new FakeKeyProvider.Store("data", v0);
        byte[] foreign = header(material(32, 2));
        try (SealedKeys keys = keys(store)) {
            opens(keys, header(v0));
            byte[] v1 = material(32, 3);
            store.roll(v1);
            clock.addAndGet(REFRESH);
            int reads = store.versionReads.get();
            int made = store.made.get();
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            store.blockNextRead(entered, release);
            FutureTask<Boolean> first = inThread("first-writer", () -> writesUnder(keys, v1));
            FutureTask<Boolean> second;
            FutureTask<Void> rolled;
            FutureTask<IOException> other;
            try {
                entered.await();
                second = inThread("second-writer", () -> writesUnder(keys, v1));
                rolled = inThread("rolled-version", () -> opens(keys, header(v1)));
                other = inThread("other-key", () -> assertThrows(SealedKeys.NoVersionMatches.class,
                        () -> keys.forReading(foreign, new Path("/other/f"))));
                while (keys.callersWaitingForRead() < 3) { // until all three wait for the read in progress
                    if (Thread.interrupted() || second.isDone() || rolled.isDone() || other.isDone()) {
                        // @Timeout interrupts this thread; a caller that ended did not wait: either fails below
                        break;
                    }
                    Thread.onSpinWait();
                }
                assertEquals(3, keys.callersWaitingForRead(), "callers waiting for the read in progress");
            } finally {
                release.countDown();
            }
            assertTrue(first.get(), "the writer that read writes under the version it found");
            assertTrue(second.get(), "the writer that shared the read writes under the version it found");
            rolled.get();
            other.get();
            assertEquals(1, store.versionReads.get() - reads, "reads of the versions");
            assertEquals(1, store.made.get() - made, "providers made");
        }
    }

    /**
     * Every material array the provider hands out (the same object for a version listed and
     * current) is zeroed once it is copied; the copies kept still read and write.
     */
    @Test
    void everyMaterialArrayHandedOutIsZeroedAfterARead() throws Exception {
        byte[] v0 = material(16, 1);
        byte[] v1 = material(32, 2);
        byte[] v2 = material(32, 3);
        FakeKeyProvider.Store store = new FakeKeyProvider.Store("data", v0, v1, v2);
        try (SealedKeys keys = keys(store)) {
            assertTrue(writesUnder(keys, v2));
            assertEquals(3, store.handedOut.size(),
                    "three versions, the current one listed too: " + store.handedOut.size());
            assertAllZero(store.handedOut, "after a read");
            assertArrayEquals(v2, store.material(2), "the store's own copy is the provider's business");
            opens(keys, header(v0));
            opens(keys, header(v1));
            opens(keys, header(v2));

            store.roll(material(16, 4)); // a current version that cannot write: kept for reading only
            clock.addAndGet(REFRESH);
            IOException e = assertThrows(IOException.class, () -> keys.forWriting(false));
            assertTrue(e.getMessage().contains("is 128 bits"), e.getMessage());
            assertAllZero(store.handedOut, "after a read whose current version cannot write");
        }
    }

    /**
     * The arrays are zeroed when the read fails too: the provider failing after it listed the
     * versions, and the keys closed while the provider was being read.
     */
    @Test
    void materialHandedOutIsZeroedWhenTheReadFails() throws Exception {
        byte[] v0 = material(32, 1);
        FakeKeyProvider.Store store = new FakeKeyProvider.Store("data", v0);
        try (SealedKeys keys = keys(store)) {
            store.currentKeyFails = true;
            IOException e = assertThrows(IOException.class, () -> keys.forWriting(false));
            assertTrue(e.getMessage().contains("cannot read the key 'data'"), e.getMessage());
            assertAllZero(store.handedOut, "after getCurrentKey failed");
        }

        FakeKeyProvider.Store closing = new FakeKeyProvider.Store("data", v0);
        SealedKeys keys = keys(closing);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        closing.blockNextRead(entered, release);
        FutureTask<IOException> writer = inThread("writer",
                () -> assertThrows(IOException.class, () -> keys.forWriting(false)));
        try {
            entered.await();
            keys.close(); // waits for no read
        } finally {
            release.countDown();
        }
        IOException closed = writer.get();
        assertTrue(closed.getMessage().contains("the sealed file system was closed"), closed.getMessage());
        assertAllZero(closing.handedOut, "after a read that found the keys closed");
    }

    /**
     * A transient provider (Hadoop's {@code user:///}) hands out the arrays it goes on using (the
     * user's credentials): zeroing them would leave every later reader in the JVM a key of zeros.
     */
    @Test
    void aTransientProvidersArraysAreLeftAlone() throws Exception {
        byte[] v0 = material(32, 1);
        FakeKeyProvider.Store store = new FakeKeyProvider.Store("data", v0);
        store.transientStore = true;
        try (SealedKeys keys = keys(store)) {
            assertTrue(writesUnder(keys, v0));
            assertArrayEquals(v0, store.material(0));
        }

        URI user = URI.create("user:///");
        String name = "untouched-" + java.util.UUID.randomUUID(); // the user's credentials last as long as the JVM
        SealedFixture.createKey(user, name, 256);
        byte[] before = currentMaterial(user, name);
        Configuration conf = SealedFixture.sealedConf(user);
        conf.set(SealedFileSystem.KEY_NAME, name);
        try (SealedKeys keys = SealedKeys.load(conf, 1)) {
            assertTrue(writesUnder(keys, before));
        }
        assertArrayEquals(before, currentMaterial(user, name), "the user's key after a read");
    }

    /**
     * A provider that hands out arrays it keeps while saying it is not transient has them zeroed
     * by the first read; the next read then finds material of zeros, which is no key: it is
     * never written with, and the failure says why.
     */
    @Test
    void materialOfZerosIsNeverUsed() throws Exception {
        byte[] v0 = material(32, 1);
        FakeKeyProvider.Store store = new FakeKeyProvider.Store("data", v0);
        store.sharesArrays = true;
        try (SealedKeys keys = keys(store)) {
            assertTrue(writesUnder(keys, v0));
            assertArrayEquals(new byte[32], store.material(0), "zeroed: SealedKeys cannot tell the provider keeps it");
            clock.addAndGet(REFRESH);
            IOException e = assertThrows(IOException.class, () -> keys.forWriting(false));
            assertTrue(e.getMessage().contains("zero bytes only"), e.getMessage());
        }
    }

    private static byte[] currentMaterial(URI uri, String name) throws IOException {
        KeyProvider provider = KeyProviderFactory.get(uri, new Configuration(false));
        try {
            return provider.getCurrentKey(name).getMaterial().clone();
        } finally {
            provider.close();
        }
    }
}
