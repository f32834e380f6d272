package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * {@link SealedFileSystem} with its key in Hadoop's KMS server ({@code
 * sealpipe.fs.key.provider.path=kms://http@127.0.0.1:PORT/kms}), {@code sfile} over the local
 * file system: files written before and after a roll of the key through the KMS both read; a file
 * whose key version the KMS no longer has fails naming the key and the versions tried; a KMS
 * stopped in the middle of a job fails new work with an {@code IOException} naming the KMS and
 * the key, never with a partial or wrong read, while files already open keep reading. Also
 * counts the KMS's key calls per file opened and per 1,000 files listed (written to {@code
 * target/kms/key-calls.txt} for the record).
 */
class KmsSealedFileSystemTest {
    private static final String KEY = "data";
    private static final int CHUNK = 16 * 1024;

    private Kms kms;
    private java.nio.file.Path dir;

    @BeforeEach
    void startKms(TestInfo test) throws Exception {
        String name = test.getTestMethod().orElseThrow().getName();
        kms = Kms.start(Kms.dir(name));
        kms.createKey(KEY, 256);
        dir = java.nio.file.Path.of("target", "kms-sealed", name).toAbsolutePath();
        TestFiles.deleteRecursively(dir);
        Files.createDirectories(dir);
    }

    @AfterEach
    void stopKms() {
        if (kms != null) {
            kms.stop();
        }
    }

    /** A SealedFileSystem of its own on the KMS's key, its versions refreshed after {@code refreshSeconds}. */
    private FileSystem sealed(long refreshSeconds, boolean compress) throws IOException {
        Configuration conf = new Configuration();
        conf.set("fs.sfile.impl", SealedFileSystem.class.getName());
        conf.set(SealedFileSystem.wrapsKey("sfile"), "file");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, kms.uri().toString());
        conf.set(SealedFileSystem.KEY_NAME, KEY);
        conf.setLong(SealedFileSystem.KEY_REFRESH_SECONDS, refreshSeconds);
        if (compress) {
            conf.set(SealedFileSystem.COMPRESS, "snappy");
        }
        FileSystem fs = FileSystem.newInstance(URI.create("sfile:///"), conf);
        assertInstanceOf(SealedFileSystem.class, fs);
        return fs;
    }

    private FileSystem sealed() throws IOException {
        return sealed(SealedFileSystem.DEFAULT_KEY_REFRESH_SECONDS, false);
    }

    private Path sealedPath(String name) {
        return new Path("sfile://" + dir.resolve(name));
    }

    private static byte[] data(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static void write(FileSystem fs, Path path, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(path, false)) {
            out.write(data);
        }
    }

    private static byte[] readAll(FileSystem fs, Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    /** The streams of the key's version {@code version} (null: the current one), read from the KMS. */
    private GcmStreams version(String version) throws IOException {
        KeyProvider provider = kms.client();
        try {
            KeyProvider.KeyVersion key = version == null ? provider.getCurrentKey(KEY) : provider.getKeyVersion(version);
            try {
                return GcmStreams.builder().key(key.getMaterial()).build();
            } finally {
                java.util.Arrays.fill(key.getMaterial(), (byte) 0); // the KMS client's own copy
            }
        } finally {
            provider.close();
        }
    }

    /** The plaintext of the stored file {@code name}, decrypted by {@code key} outside the file system. */
    private byte[] decryptStored(String name, GcmStreams key) throws IOException {
        try (InputStream in = key.decrypt(Files.newInputStream(dir.resolve(name)))) {
            return in.readAllBytes();
        }
    }

    @Test
    void filesWrittenBeforeAndAfterARollThroughTheKmsBothRead() throws Exception {
        byte[] before = data(3 * CHUNK + 5, 1);
        byte[] after = data(2 * CHUNK + 7, 2);
        byte[] refreshed = data(CHUNK + 11, 8);
        String first;
        FileSystem old = sealed();
        // A running task that reads the versions for every file (refresh 0).
        FileSystem eager = sealed(0, false);
        try {
            write(old, sealedPath("before"), before);
            write(eager, sealedPath("eager-before"), before);
            KeyProvider provider = kms.client();
            try {
                first = provider.getCurrentKey(KEY).getVersionName();
                provider.rollNewVersion(KEY);
            } finally {
                provider.close();
            }
            // A task started after the roll writes with the new version.
            FileSystem fresh = sealed();
            try {
                write(fresh, sealedPath("after"), after);
                assertArrayEquals(before, readAll(fresh, sealedPath("before")), "the file of the old version, read by the new task");
            } finally {
                fresh.close();
            }
            // The running task writes with the new version from its next refresh on.
            write(eager, sealedPath("refreshed"), refreshed);
            // The old task, which has only the old version, finds the new one in the KMS.
            assertArrayEquals(after, readAll(old, sealedPath("after")), "the file of the new version, read by the old task");
            assertArrayEquals(before, readAll(old, sealedPath("before")));
        } finally {
            eager.close();
            old.close();
        }
        GcmStreams v0 = version(first);
        GcmStreams current = version(null);
        try {
            assertArrayEquals(before, decryptStored("before", v0), "the old file is sealed under " + first);
            assertArrayEquals(after, decryptStored("after", current), "the new file is sealed under the current version");
            assertArrayEquals(before, decryptStored("eager-before", v0), "the running task's file before the roll");
            assertArrayEquals(refreshed, decryptStored("refreshed", current), "the running task's file after the roll");
            assertThrows(IOException.class, () -> decryptStored("before", current), "the old file under the new version");
        } finally {
            v0.destroy();
            current.destroy();
        }
    }

    @Test
    void aFileOfAKeyTheKmsNoLongerHasFailsNamingTheKeyAndTheVersionsTried() throws IOException {
        byte[] content = data(CHUNK + 1, 3);
        FileSystem writer = sealed();
        try {
            write(writer, sealedPath("orphan"), content);
        } finally {
            writer.close();
        }
        // The key is deleted and made again under the same name: new material, the old versions gone.
        KeyProvider provider = kms.client();
        try {
            provider.deleteKey(KEY);
        } finally {
            provider.close();
        }
        kms.createKey(KEY, 256);

        FileSystem reader = sealed();
        try {
            IOException e = assertThrows(IOException.class, () -> readAll(reader, sealedPath("orphan")));
            String message = e.getMessage();
            assertTrue(message.contains(sealedPath("orphan").toUri().getPath()), message);
            assertTrue(message.contains("no version of the key '" + KEY + "' in " + kms.uri()), message);
            assertTrue(message.contains("(tried " + KEY + "@0)"), message);
            // A file of the new key still reads.
            byte[] fresh = data(100, 4);
            write(reader, sealedPath("fresh"), fresh);
            assertArrayEquals(fresh, readAll(reader, sealedPath("fresh")));
        } finally {
            reader.close();
        }
    }

    @Test
    void aKeyDeletedInTheKmsNoLongerReadsOnceItsVersionsAreReadAgain() throws Exception {
        byte[] content = data(CHUNK + 1, 7);
        FileSystem eager = sealed(0, false);
        try {
            write(eager, sealedPath("f"), content);
            assertArrayEquals(content, readAll(eager, sealedPath("f")));
            KeyProvider provider = kms.client();
            try {
                provider.deleteKey(KEY);
            } finally {
                provider.close();
            }
            IOException reading = assertThrows(IOException.class, () -> readAll(eager, sealedPath("f")));
            assertTrue(reading.getMessage().contains("the key '" + KEY + "' in " + kms.uri() + " has no current version: it was deleted"),
                    reading.getMessage());
            IOException creating = assertThrows(IOException.class, () -> eager.create(sealedPath("g"), false));
            assertTrue(creating.getMessage().contains("has no current version: it was deleted"), creating.getMessage());
            assertFalse(Files.exists(dir.resolve("g")), "a file was made without a key");
        } finally {
            eager.close();
        }
    }

    @Test
    void aKmsStoppedInTheMiddleOfAJobFailsNewWorkNamingItAndTheKeyWhileOpenFilesKeepReading() throws IOException {
        byte[] open = data(8 * CHUNK + 9, 5);
        byte[] other = data(2 * CHUNK, 6);
        FileSystem task = sealed();
        // A task that reads the key for every file (refresh 0), as one that starts after the stop would.
        FileSystem eager = sealed(0, false);
        // A task that started before the stop but has not needed the key's versions yet.
        FileSystem idle = sealed();
        try {
            write(task, sealedPath("open"), open);
            write(task, sealedPath("other"), other);
            FSDataInputStream reading = eager.open(sealedPath("open"));
            try {
                byte[] head = new byte[CHUNK + 3];
                reading.readFully(head);

                kms.stop();

                // The file opened before the stop reads to its end, every byte right.
                byte[] rest = reading.readAllBytes();
                byte[] whole = new byte[head.length + rest.length];
                System.arraycopy(head, 0, whole, 0, head.length);
                System.arraycopy(rest, 0, whole, head.length, rest.length);
                assertArrayEquals(open, whole, "the file opened before the KMS stopped");
                byte[] positioned = new byte[100];
                reading.readFully(5 * CHUNK, positioned);
                assertArrayEquals(java.util.Arrays.copyOfRange(open, 5 * CHUNK, 5 * CHUNK + 100), positioned);
            } finally {
                reading.close();
            }

            // An outage is not a deletion: the versions read before still open files they wrote,
            // even for a task that refreshes them for every file.
            assertArrayEquals(other, readAll(eager, sealedPath("other")));
            assertArrayEquals(other, readAll(task, sealedPath("other")));
            // Creating a file past the refresh period needs the KMS (is the current version still
            // current?): it fails naming the KMS and the key, before a file is made.
            IOException creating = assertThrows(IOException.class, () -> eager.create(sealedPath("made"), false));
            assertNamesKmsAndKey(creating);
            assertFalse(Files.exists(dir.resolve("made")), "a file was made without a key");

            // The task that had not read the versions fails at its first file, naming it.
            IOException opening = assertThrows(IOException.class, () -> idle.open(sealedPath("other")));
            assertNamesKmsAndKey(opening);
            assertTrue(opening.getMessage().contains(sealedPath("other").toUri().getPath()), opening.getMessage());

            // A task that starts now (a new file system, as in a new container) fails at once.
            IOException starting = assertThrows(IOException.class, this::sealed);
            assertNamesKmsAndKey(starting);
        } finally {
            idle.close();
            eager.close();
            task.close();
        }
    }

    private void assertNamesKmsAndKey(IOException e) {
        String message = e.getMessage();
        assertTrue(message.contains(kms.uri().toString()), () -> "the KMS is not named: " + message);
        assertTrue(message.contains("'" + KEY + "'"), () -> "the key is not named: " + message);
    }

    @Test
    void keyCallsPerFileOpenedAndPerThousandFilesListed() throws IOException {
        int files = 1000;
        int opened = 100;
        FileSystem writer = sealed();
        FileSystem compressing = sealed(SealedFileSystem.DEFAULT_KEY_REFRESH_SECONDS, true);
        try {
            for (int i = 0; i < files; i++) {
                write(writer, sealedPath("plain/" + i), data(100 + i, i));
                write(compressing, sealedPath("snappy/" + i), ("line " + i + "\n").repeat(10).getBytes(StandardCharsets.US_ASCII));
            }
        } finally {
            writer.close();
            compressing.close();
        }

        StringBuilder report = new StringBuilder();
        // Each figure: a new file system (a new task), so that its first use of the key is counted.
        long plainListing = calls(report, "list 1000 plain files, statuses of all", false, SealedFileSystem.DEFAULT_KEY_REFRESH_SECONDS,
                fs -> assertEquals(files, fs.listStatus(sealedPath("plain")).length));
        long snappyListing = calls(report, "list 1000 compressed files, statuses of all", true, SealedFileSystem.DEFAULT_KEY_REFRESH_SECONDS,
                fs -> assertEquals(files, fs.listStatus(sealedPath("snappy")).length));
        long opens = calls(report, "open and read " + opened + " files", false, SealedFileSystem.DEFAULT_KEY_REFRESH_SECONDS,
                fs -> {
                    for (int i = 0; i < opened; i++) {
                        assertEquals(100 + i, readAll(fs, sealedPath("plain/" + i)).length);
                    }
                });
        int eagerlyOpened = 20;
        long eagerOpens = calls(report, "open and read " + eagerlyOpened + " files, refresh 0", false, 0,
                fs -> {
                    for (int i = 0; i < eagerlyOpened; i++) {
                        assertEquals(100 + i, readAll(fs, sealedPath("plain/" + i)).length);
                    }
                });
        java.nio.file.Path record = java.nio.file.Path.of("target", "kms", "key-calls.txt");
        Files.createDirectories(record.getParent());
        Files.writeString(record, report);
        System.err.print(report);

        // Starting a file system checks that the key exists (its metadata: 1 call); a plain listing
        // needs no key (a sealed file's plaintext length follows from its stored length).
        assertEquals(1, plainListing, report::toString);
        // A compressed file's length is in its sealed content: one read of the versions (the key's
        // versions and its current one: 2 calls) serves the whole listing.
        assertEquals(3, snappyListing, report::toString);
        // Files opened within the refresh period share one read of the versions.
        assertEquals(3, opens, report::toString);
        // Refresh 0: every file opened reads them again (2 calls each), on top of the start.
        assertEquals(1 + 2L * eagerlyOpened, eagerOpens, report::toString);
    }

    private interface Work {
        void run(FileSystem fs) throws IOException;
    }

    /** The KMS's key calls made by a new file system that does {@code work}, added to {@code report}. */
    private long calls(StringBuilder report, String what, boolean compress, long refreshSeconds, Work work) throws IOException {
        long before = Kms.calls();
        FileSystem fs = sealed(refreshSeconds, compress);
        try {
            work.run(fs);
        } finally {
            fs.close();
        }
        long calls = Kms.calls() - before;
        report.append(String.format("%-50s %5d KMS calls%n", what + ":", calls));
        return calls;
    }
}
