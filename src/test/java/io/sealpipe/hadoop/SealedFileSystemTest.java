package io.sealpipe.hadoop;

import static io.sealpipe.hadoop.SealedFixture.data;
import static io.sealpipe.hadoop.SealedFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link SealedFileSystem} over the local file system, keys in a JCEKS keystore: round trips
 * checked against {@link GcmStreams} on the stored bytes (both ways), seeks and positioned reads
 * from several threads, listings, renames, key rotation, tampering, truncation, a wrong key,
 * abandoned writers, the refused operations and configuration mistakes.
 */
class SealedFileSystemTest {
    private static final int CHUNK = 16 * 1024;

    @TempDir
    java.nio.file.Path dir;

    private SealedFixture fixture;
    private FileSystem fs;

    @BeforeEach
    void setUp() throws IOException {
        fixture = new SealedFixture(dir);
        fs = fixture.sealed();
    }

    @AfterEach
    void tearDown() throws IOException {
        fs.close();
    }

    private GcmStreams currentKey() throws IOException {
        KeyProvider provider = fixture.provider();
        try {
            return GcmStreams.builder().key(provider.getCurrentKey(SealedFixture.KEY).getMaterial()).build();
        } finally {
            provider.close();
        }
    }

    private byte[] stored(String name) throws IOException {
        return Files.readAllBytes(dir.resolve(name));
    }

    /** Replaces the stored file through the wrapped file system (which writes a matching .crc). */
    private void replaceStored(String name, byte[] bytes) throws IOException {
        try (FSDataOutputStream out = fixture.local().create(fixture.storedPath(name), true)) {
            out.write(bytes);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 100, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK - 1, 2 * CHUNK, 2 * CHUNK + 1, 3 * CHUNK + 5,
            (1 << 20) + 7, 24 << 20})
    void roundTripsAndStoresOneMessageThatGcmStreamsReads(int size) throws IOException {
        byte[] plain = data(size, size);
        Path path = fixture.sealedPath("f");
        write(fs, path, plain);

        assertEquals(size, fs.getFileStatus(path).getLen());
        byte[] stored = stored("f");
        assertEquals(GcmStreams.ciphertextLength(size), stored.length);
        assertEquals(size, GcmStreams.plaintextLength(stored.length));
        GcmStreams key = currentKey();
        try (InputStream in = key.decrypt(new java.io.ByteArrayInputStream(stored))) {
            assertArrayEquals(plain, in.readAllBytes(), "the stored file is one message of the format");
        } finally {
            key.destroy();
        }
        for (int buffer : new int[] {1, 4096, CHUNK, 100_000, 1 << 20}) {
            if (buffer == 1 && size > 100_000) {
                continue;
            }
            assertArrayEquals(plain, readAll(path, buffer), "read with a " + buffer + "-byte buffer");
        }
    }

    @Test
    void readsAFileThatGcmStreamsWrote() throws IOException {
        byte[] plain = data(5 * CHUNK + 77, 7);
        GcmStreams key = currentKey();
        try (OutputStream out = key.encrypt(Files.newOutputStream(dir.resolve("g")))) {
            out.write(plain);
        } finally {
            key.destroy();
        }
        assertArrayEquals(plain, readAll(fixture.sealedPath("g"), 8192));
    }

    private byte[] readAll(Path path, int buffer) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] b = new byte[buffer];
        try (FSDataInputStream in = fs.open(path)) {
            for (int n; (n = in.read(b, 0, buffer)) > 0; ) {
                all.write(b, 0, n);
            }
            assertEquals(-1, in.read());
        }
        return all.toByteArray();
    }

    @Test
    void statisticsCountPlaintextBytes() throws IOException {
        Path path = fixture.sealedPath("stats");
        FileSystem.Statistics stats = FileSystem.getStatistics("sfile", SealedFileSystem.class);
        long read = stats.getBytesRead();
        long written = stats.getBytesWritten();
        write(fs, path, data(3 * CHUNK, 1));
        assertEquals(written + 3 * CHUNK, stats.getBytesWritten());
        try (FSDataInputStream in = fs.open(path)) {
            in.readFully(1000, new byte[5000]);
            in.seek(2 * CHUNK);
            in.read(new byte[100]);
        }
        assertEquals(read + 5100, stats.getBytesRead());
    }

    /**
     * Nearby small reads decrypt each chunk once with the cache and once per read without it;
     * a sequential read of the whole file opens the chunks the cache does not have, once each.
     */
    @Test
    void theChunkCacheSavesDecryptionForNearbyReads() throws IOException {
        Path path = fixture.sealedPath("cache");
        byte[] plain = data(8 * CHUNK, 4);
        write(fs, path, plain);
        for (int cached : new int[] {0, 8}) {
            Configuration conf = new Configuration(fixture.conf);
            conf.setInt(SealedFileSystem.CACHE_CHUNKS, cached);
            try (FileSystem sealed = FileSystem.get(java.net.URI.create("sfile:///"), conf);
                    FSDataInputStream in = sealed.open(path)) {
                byte[] b = new byte[4096];
                for (int round = 0; round < 3; round++) {
                    for (int chunk = 0; chunk < 4; chunk++) {
                        for (int quarter = 0; quarter < 4; quarter++) {
                            int at = chunk * CHUNK + quarter * 4096;
                            in.readFully(at, b);
                            assertArrayEquals(Arrays.copyOfRange(plain, at, at + 4096), b);
                        }
                    }
                }
                long opened = in.getIOStatistics().counters().get(SealedFileSystem.CHUNKS_OPENED);
                assertEquals(cached == 0 ? 3 * 16 : 4, opened, "chunks opened with a cache of " + cached);
                in.seek(0);
                byte[] all = new byte[plain.length];
                in.readFully(all);
                assertArrayEquals(plain, all);
                assertEquals(opened + (cached == 0 ? 8 : 4), in.getIOStatistics().counters().get(SealedFileSystem.CHUNKS_OPENED),
                        "a sequential read of the whole file opens each chunk not in the cache once");
            }
        }
    }

    @Test
    void readsIntoHeapAndDirectBuffers() throws IOException {
        byte[] plain = data(4 * CHUNK + 3, 3);
        Path path = fixture.sealedPath("b");
        write(fs, path, plain);
        for (boolean direct : new boolean[] {false, true}) {
            try (FSDataInputStream in = fs.open(path)) {
                assertTrue(in.hasCapability(StreamCapabilities.READBYTEBUFFER));
                ByteBuffer buf = direct ? ByteBuffer.allocateDirect(plain.length + 10) : ByteBuffer.allocate(plain.length + 10);
                buf.limit(1000);
                while (in.read(buf) > 0) {
                    buf.limit(Math.min(buf.capacity(), buf.position() + 7777));
                }
                buf.flip();
                byte[] got = new byte[buf.remaining()];
                buf.get(got);
                assertArrayEquals(plain, got, direct ? "direct" : "heap");
            }
        }
    }

    /**
     * Four threads: two seek and read on streams of their own, two make positioned reads on one
     * shared stream, which the other reads move; each checks every byte.
     */
    @Test
    void seeksAndPositionedReadsFromSeveralThreads() throws Exception {
        byte[] plain = data(3 * (1 << 20) + 123, 11);
        Path path = fixture.sealedPath("r");
        write(fs, path, plain);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch start = new CountDownLatch(1);
        try (FSDataInputStream shared = fs.open(path)) {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                boolean positioned = t % 2 == 0;
                long seed = t;
                results.add(pool.submit(() -> {
                    start.await();
                    Random random = new Random(seed);
                    int checked = 0;
                    try (FSDataInputStream own = fs.open(path)) {
                        for (int i = 0; i < 1500; i++) {
                            int at = random.nextInt(plain.length + 1);
                            int len = random.nextInt(3) == 0 ? random.nextInt(3 * CHUNK) : random.nextInt(300);
                            int expected = Math.min(len, plain.length - at);
                            byte[] got = new byte[len];
                            if (positioned) {
                                if (expected == len) {
                                    shared.readFully(at, got, 0, len);
                                    assertArrayEquals(Arrays.copyOfRange(plain, at, at + len), got, "readFully at " + at);
                                } else {
                                    int n = shared.read(at, got, 0, len);
                                    if (expected == 0) {
                                        assertEquals(-1, n, "read at the end");
                                    } else {
                                        assertTrue(n > 0 && n <= expected, "read " + n + " at " + at);
                                        assertArrayEquals(Arrays.copyOfRange(plain, at, at + n), Arrays.copyOf(got, n), "at " + at);
                                    }
                                }
                                shared.seek(random.nextInt(plain.length)); // the position moves under the positioned reads
                                shared.read();
                            } else {
                                own.seek(at);
                                assertEquals(at, own.getPos());
                                int n = own.read(got, 0, len);
                                if (len == 0) {
                                    assertEquals(0, n);
                                } else if (expected == 0) {
                                    assertEquals(-1, n);
                                } else {
                                    assertTrue(n > 0 && n <= expected, "read " + n + " at " + at);
                                    assertArrayEquals(Arrays.copyOfRange(plain, at, at + n), Arrays.copyOf(got, n), "at " + at);
                                }
                            }
                            checked++;
                        }
                    }
                    return checked;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> result : results) {
                total += result.get();
            }
            assertTrue(total >= 4000, "checked " + total);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void seekBoundsAreHadoops() throws IOException {
        Path path = fixture.sealedPath("s");
        write(fs, path, data(100, 1));
        try (FSDataInputStream in = fs.open(path)) {
            in.seek(100);
            assertEquals(-1, in.read());
            assertThrows(EOFException.class, () -> in.seek(101));
            assertThrows(EOFException.class, () -> in.seek(-1));
            assertThrows(EOFException.class, () -> in.readFully(90, new byte[11]));
            assertEquals(-1, in.read(100, new byte[1], 0, 1));
        }
    }

    @Test
    void listsAndGlobsPlaintextLengthsAndRenamesAndDeletesPassThrough() throws IOException {
        Path d = fixture.sealedPath("d");
        assertTrue(fs.mkdirs(d, FsPermission.getDirDefault()));
        write(fs, new Path(d, "a"), data(CHUNK + 1, 1));
        write(fs, new Path(d, "b"), data(0, 2));
        FileStatus[] listed = fs.listStatus(d);
        Arrays.sort(listed);
        assertEquals(2, listed.length);
        assertEquals("sfile", listed[0].getPath().toUri().getScheme());
        assertEquals(new Path(d, "a"), listed[0].getPath());
        assertEquals(CHUNK + 1, listed[0].getLen());
        assertEquals(0, listed[1].getLen());
        assertTrue(listed[0].isEncrypted());
        assertEquals(2, fs.globStatus(new Path(d, "*")).length);
        assertEquals(CHUNK + 1, fs.getContentSummary(d).getLength());

        Path moved = fixture.sealedPath("moved");
        assertTrue(fs.rename(d, moved));
        assertArrayEquals(data(CHUNK + 1, 1), readAll(new Path(moved, "a"), 1000), "read after rename");
        assertFalse(fs.exists(d));
        assertTrue(fs.delete(moved, true));
        assertFalse(Files.exists(dir.resolve("moved")));
    }

    /**
     * Over a file system with S3A's flat listing of files and empty directories ({@link
     * FlatListingFileSystem}), a summary is built from that one listing: the same lengths and
     * counts as the wrapped file system's own summary gives the generic way.
     */
    @Test
    void aSummaryFromAFlatListingCountsAsTheWrappedSummaryDoes() throws IOException {
        Path d = fixture.sealedPath("tree");
        write(fs, new Path(d, "a"), data(CHUNK + 1, 1));
        write(fs, new Path(d, "x/b"), data(3 * CHUNK, 2));
        write(fs, new Path(d, "x/y/c"), data(0, 3));
        assertTrue(fs.mkdirs(new Path(d, "x/y/z/empty"), FsPermission.getDirDefault()));
        assertTrue(fs.mkdirs(new Path(d, "e"), FsPermission.getDirDefault()));
        ContentSummary generic = fs.getContentSummary(d);

        Configuration conf = new Configuration(fixture.conf);
        conf.set("fs.file.impl", FlatListingFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        try (FileSystem flat = FileSystem.get(URI.create("sfile:///"), conf)) {
            int listings = FlatListingFileSystem.LISTINGS.get();
            int heads = FlatListingFileSystem.HEADS.get();
            ContentSummary summary = flat.getContentSummary(d);
            assertEquals(listings + 1, FlatListingFileSystem.LISTINGS.get(), "one flat listing");
            assertEquals(heads + 1, FlatListingFileSystem.HEADS.get(), "one HEAD, that finds no object");
            assertEquals(CHUNK + 1 + 3 * CHUNK, summary.getLength());
            assertEquals(3, summary.getFileCount());
            assertEquals(6, summary.getDirectoryCount(), "tree, x, x/y, x/y/z, x/y/z/empty, e");
            assertEquals(generic.getLength(), summary.getLength());
            assertEquals(generic.getFileCount(), summary.getFileCount());
            assertEquals(generic.getDirectoryCount(), summary.getDirectoryCount());
            assertEquals(Files.size(dir.resolve("tree/a")) + Files.size(dir.resolve("tree/x/b"))
                    + Files.size(dir.resolve("tree/x/y/c")), summary.getSpaceConsumed(), "stored bytes");

            ContentSummary file = flat.getContentSummary(new Path(d, "x/b"));
            assertEquals(3 * CHUNK, file.getLength());
            assertEquals(1, file.getFileCount());
            assertEquals(0, file.getDirectoryCount());
            assertEquals(listings + 1, FlatListingFileSystem.LISTINGS.get(), "a file's summary is no listing");
            assertEquals(heads + 2, FlatListingFileSystem.HEADS.get(), "a file's summary is one HEAD");

            assertThrows(FileNotFoundException.class, () -> flat.getContentSummary(new Path(d, "missing")));

            // With S3A's client-side encryption, an object is longer than its file: a file is listed instead.
            FlatListingFileSystem.clientSideEncryption = true;
            try {
                heads = FlatListingFileSystem.HEADS.get();
                listings = FlatListingFileSystem.LISTINGS.get();
                assertEquals(3 * CHUNK, flat.getContentSummary(new Path(d, "x/b")).getLength());
                assertEquals(heads, FlatListingFileSystem.HEADS.get(), "no HEAD with client-side encryption");
                assertEquals(listings + 1, FlatListingFileSystem.LISTINGS.get(), "a listing instead");
            } finally {
                FlatListingFileSystem.clientSideEncryption = false;
            }
        }
    }

    /**
     * The local file system with S3A's object store calls: a {@code getObjectMetadata} that finds
     * files only, a {@code listFilesAndEmptyDirectories} that lists files and empty directories,
     * flat, and an {@code isCSEEnabled}.
     */
    public static final class FlatListingFileSystem extends RawLocalFileSystem {
        static final java.util.concurrent.atomic.AtomicInteger LISTINGS = new java.util.concurrent.atomic.AtomicInteger();
        static final java.util.concurrent.atomic.AtomicInteger HEADS = new java.util.concurrent.atomic.AtomicInteger();

        static volatile boolean clientSideEncryption;

        public boolean isCSEEnabled() {
            return clientSideEncryption;
        }

        /** An object's metadata, as S3 SDK 2's {@code HeadObjectResponse} gives its length. */
        public record ObjectMetadata(Long contentLength) {}

        public ObjectMetadata getObjectMetadata(Path path) throws IOException {
            HEADS.incrementAndGet();
            FileStatus status = getFileStatus(path);
            if (!status.isFile()) {
                throw new FileNotFoundException("no object " + path);
            }
            return new ObjectMetadata(status.getLen());
        }

        public RemoteIterator<LocatedFileStatus> listFilesAndEmptyDirectories(Path path, boolean recursive) throws IOException {
            LISTINGS.incrementAndGet();
            java.util.List<LocatedFileStatus> entries = new java.util.ArrayList<>();
            collect(path, entries);
            java.util.Iterator<LocatedFileStatus> it = entries.iterator();
            return new RemoteIterator<>() {
                @Override
                public boolean hasNext() {
                    return it.hasNext();
                }

                @Override
                public LocatedFileStatus next() {
                    return it.next();
                }
            };
        }

        private void collect(Path directory, java.util.List<LocatedFileStatus> entries) throws IOException {
            for (FileStatus status : listStatus(directory)) {
                String name = status.getPath().getName();
                if (name.startsWith(".") && name.endsWith(".crc")) {
                    continue; // the checksums of the LocalFileSystem that wrote the tree
                }
                if (status.isFile()) {
                    entries.add(new LocatedFileStatus(status, null));
                } else if (listStatus(status.getPath()).length == 0) {
                    entries.add(new LocatedFileStatus(status, null));
                } else {
                    collect(status.getPath(), entries);
                }
            }
        }
    }

    @Test
    void aFileWrittenBeforeAKeyRollStaysReadableAndNewFilesUseTheNewVersion() throws IOException {
        byte[] before = data(2 * CHUNK + 9, 1);
        write(fs, fixture.sealedPath("old"), before);
        GcmStreams v0 = currentKey();
        fixture.rollKey();
        GcmStreams v1 = currentKey();
        byte[] after = data(CHUNK + 3, 2);
        try (FileSystem fresh = fixture.sealed()) { // a new instance sees the rolled keystore
            write(fresh, fixture.sealedPath("new"), after);
            assertArrayEquals(before, readAll(fresh, fixture.sealedPath("old")));
            assertArrayEquals(after, readAll(fresh, fixture.sealedPath("new")));
        }
        // The instance made before the roll finds the new version by reloading its provider.
        assertArrayEquals(after, readAll(fs, fixture.sealedPath("new")));
        assertArrayEquals(before, readAll(fs, fixture.sealedPath("old")));
        assertTrue(v0.matchesHeader(stored("old")));
        assertFalse(v0.matchesHeader(stored("new")));
        assertTrue(v1.matchesHeader(stored("new")));
        v0.destroy();
        v1.destroy();
    }

    @Test
    void withRefreshZeroARunningFileSystemWritesWithARolledVersionAtOnce() throws IOException {
        write(fs, fixture.sealedPath("zero"), data(10, 0)); // fs reads the versions now, before the roll
        Configuration conf = new Configuration(fixture.conf);
        conf.setLong(SealedFileSystem.KEY_REFRESH_SECONDS, 0);
        try (FileSystem sealed = FileSystem.get(java.net.URI.create("sfile:///"), conf)) {
            write(sealed, fixture.sealedPath("first"), data(10, 1));
            fixture.rollKey();
            write(sealed, fixture.sealedPath("second"), data(10, 2));
        }
        GcmStreams v1 = currentKey();
        assertFalse(v1.matchesHeader(stored("first")));
        assertTrue(v1.matchesHeader(stored("second")));
        v1.destroy();
        // The default keeps the versions it read: the instance made before the roll still writes with version 0.
        write(fs, fixture.sealedPath("third"), data(10, 3));
        GcmStreams v1again = currentKey();
        assertFalse(v1again.matchesHeader(stored("third")));
        v1again.destroy();
    }

    private static byte[] readAll(FileSystem fs, Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    @Test
    void oneModifiedStoredByteFailsTheReadsOfItsChunkOnly() throws IOException {
        byte[] plain = data(4 * CHUNK + 100, 5);
        Path path = fixture.sealedPath("t");
        write(fs, path, plain);
        byte[] stored = stored("t");
        stored[GcmStreams.HEADER_LENGTH + 2 * (CHUNK + 16) + 1000] ^= 1; // in chunk 2
        replaceStored("t", stored);

        try (FSDataInputStream in = fs.open(path)) {
            StreamAuthenticationException e = assertThrows(StreamAuthenticationException.class, in::readAllBytes);
            assertEquals(2, e.chunk());
            assertTrue(e.getMessage().contains(path.toString()) && e.getMessage().contains("chunk 2"), e.getMessage());
            byte[] intact = new byte[2 * CHUNK];
            in.readFully(0, intact);
            assertArrayEquals(Arrays.copyOf(plain, 2 * CHUNK), intact, "chunks 0 and 1 are intact");
            in.readFully(3 * CHUNK, intact, 0, CHUNK + 100);
            byte[] untouched = new byte[100];
            Arrays.fill(untouched, (byte) 0x5a);
            StreamAuthenticationException positioned = assertThrows(StreamAuthenticationException.class,
                    () -> in.readFully(2 * CHUNK + 10, untouched));
            assertEquals(2, positioned.chunk());
            for (byte b : untouched) {
                assertEquals(0x5a, b, "no byte of the failed chunk reaches the caller");
            }
        }
    }

    @Test
    void aTamperedHeaderOrAWrongKeyFailsAtOpen() throws IOException {
        Path path = fixture.sealedPath("h");
        write(fs, path, data(1000, 1));
        byte[] stored = stored("h");
        stored[30] ^= 1; // in the key commitment
        replaceStored("h", stored);
        IOException e = assertThrows(IOException.class, () -> fs.open(path));
        assertTrue(e.getMessage().contains(path.toString()) && e.getMessage().contains("no version of the key 'data'"),
                e.getMessage());

        write(fs, path, data(1000, 1));
        SealedFixture other = new SealedFixture(Files.createDirectory(dir.resolve("other")));
        try (FileSystem wrongKey = other.sealed()) {
            IOException wrong = assertThrows(IOException.class, () -> wrongKey.open(path));
            assertTrue(wrong.getMessage().contains("written under another key, or it is not a sealed file"), wrong.getMessage());
        }
    }

    @Test
    void aTruncatedStoredFileNeverReadsAsAShorterOne() throws IOException {
        byte[] plain = data(3 * CHUNK + 500, 9);
        Path path = fixture.sealedPath("cut");
        write(fs, path, plain);
        byte[] stored = stored("cut");

        // Cut inside the final chunk: a length some message has, so the status shows it, but the read fails.
        replaceStored("cut", Arrays.copyOf(stored, stored.length - 100));
        assertEquals(3 * CHUNK + 400, fs.getFileStatus(path).getLen());
        try (FSDataInputStream in = fs.open(path)) {
            StreamAuthenticationException e = assertThrows(StreamAuthenticationException.class, in::readAllBytes);
            assertEquals(3, e.chunk());
        }
        // Cut after a whole chunk: no message has this length, so it lists with its whole chunks'
        // plaintext and a byte past them, and reading gives those chunks, then fails.
        replaceStored("cut", Arrays.copyOf(stored, GcmStreams.HEADER_LENGTH + 2 * (CHUNK + 16)));
        assertEquals(2 * CHUNK + 1, fs.listStatus(path)[0].getLen());
        assertUnfinishedReads(fs, path, plain, 2 * CHUNK);
        // Cut inside a chunk that is not the last: the same with the whole chunks before it.
        replaceStored("cut", Arrays.copyOf(stored, GcmStreams.HEADER_LENGTH + 2 * (CHUNK + 16) + 7));
        assertUnfinishedReads(fs, path, plain, 2 * CHUNK);
        // Shorter than a header: one byte, and open fails naming it.
        replaceStored("cut", Arrays.copyOf(stored, 10));
        assertEquals(1, fs.getFileStatus(path).getLen());
        IOException open = assertThrows(IOException.class, () -> fs.open(path));
        assertTrue(open.getMessage().contains(path.toString()) && open.getMessage().contains("cut short"), open.getMessage());
    }

    @Test
    void aClosedStreamRefusesEveryReadEvenOfNothing() throws IOException {
        Path path = fixture.sealedPath("closed");
        write(fs, path, data(100, 4));
        FSDataInputStream in = fs.open(path);
        in.close();
        byte[] b = new byte[10];
        assertThrows(IOException.class, () -> in.read(b, 0, 0));
        assertThrows(IOException.class, () -> in.read(5, b, 0, 0));
        assertThrows(IOException.class, () -> in.read(5, b, 0, 1));
        assertThrows(IOException.class, in::read);
    }

    @Test
    void anAbortedOrFailedWriterLeavesAFileEveryReaderRejects() throws IOException {
        Path aborted = fixture.sealedPath("aborted");
        FSDataOutputStream out = fs.create(aborted);
        out.write(data(3 * CHUNK + 50, 1));
        out.flush();
        // Over the local file system an aborted file stays behind (rejected), so the capability,
        // which promises that nothing does, is not claimed.
        assertFalse(out.hasCapability(StreamCapabilities.ABORTABLE_STREAM));
        out.abort();
        out.close(); // does nothing after abort
        assertRejected(aborted);

        // Never closed: what reached the file (the header and the sealed chunks) is no sealed file.
        Path abandoned = fixture.sealedPath("abandoned");
        FSDataOutputStream open = fs.create(abandoned);
        open.write(data(2 * CHUNK + 50, 1));
        assertThrows(UnsupportedOperationException.class, open::hflush, "not at a chunk boundary");
        assertRejected(abandoned);
        open.close();
    }

    private void assertRejected(Path path) throws IOException {
        long stored = fixture.local().getFileStatus(fs instanceof SealedFileSystem s ? s.toWrapped(path) : path).getLen();
        assertEquals(SealedFileSystem.listedLength(stored), fs.getFileStatus(path).getLen());
        if (stored < GcmStreams.HEADER_LENGTH) {
            assertThrows(IOException.class, () -> fs.open(path));
            return;
        }
        try (FSDataInputStream in = fs.open(path)) {
            assertThrows(StreamAuthenticationException.class, in::readAllBytes);
        }
    }

    /**
     * An unfinished file with {@code whole} bytes of whole chunks' plaintext (of {@code plain}):
     * it lists with one byte more; reads give those bytes, authenticated, by position and in
     * sequence; reading the listed length, or the end, fails as truncated naming the file, never
     * as the end of a shorter file.
     */
    static void assertUnfinishedReads(FileSystem fs, Path path, byte[] plain, int whole) throws IOException {
        long listed = fs.getFileStatus(path).getLen();
        assertEquals(whole + 1, listed);
        try (FSDataInputStream in = fs.open(path)) {
            byte[] first = new byte[whole];
            in.readFully(0, first);
            assertArrayEquals(Arrays.copyOf(plain, whole), first);
            StreamAuthenticationException all = assertThrows(StreamAuthenticationException.class,
                    () -> in.readFully(0, new byte[(int) listed]));
            assertTrue(all.getMessage().contains(path.toString()), all.getMessage());
            StreamAuthenticationException end = assertThrows(StreamAuthenticationException.class, in::readAllBytes);
            assertTrue(end.getMessage().contains(path.toString()), end.getMessage());
            assertThrows(IOException.class, () -> in.read(whole, new byte[1], 0, 1));
        }
    }

    /**
     * A file being written is listed and never read as a whole file before it is closed. Where
     * the wrapped stream has passed on exactly what the sealed one gave it (the raw local file
     * system, after an hflush at a chunk boundary: the header and two sealed chunks) the stored
     * length is no sealed file's: the file and its directory list it with its two chunks'
     * plaintext, as HDFS lists a file being written, and reading gives those chunks and fails
     * past them. Where it has passed on some other part (Hadoop's checksummed local file system
     * keeps a partial buffer back) the length may look like a sealed file's, and the read fails
     * as truncated. Once closed the file has its length and reads.
     */
    @Test
    void aFileBeingWrittenIsNotReadUntilClosed() throws IOException {
        byte[] plain = data(2 * CHUNK + 5, 2);
        try (FileSystem raw = FileSystem.get(java.net.URI.create("sfile:///"), rawLocal())) {
            Path path = fixture.sealedPath("raw");
            try (FSDataOutputStream out = raw.create(path, false)) {
                out.write(plain, 0, 2 * CHUNK);
                out.hflush(); // at a chunk boundary
                assertEquals(GcmStreams.HEADER_LENGTH + 2 * (CHUNK + 16), Files.size(dir.resolve("raw")));
                // Listed as HDFS lists a file being written: what is sealed so far, and a byte that
                // fails (so that reading the listed length never ends as a shorter file).
                FileStatus[] listing = raw.listStatus(fixture.sealedPath(""));
                assertTrue(Arrays.stream(listing).anyMatch(st -> st.getPath().getName().equals("raw")
                        && st.getLen() == 2 * CHUNK + 1), Arrays.toString(listing));
                assertUnfinishedReads(raw, path, plain, 2 * CHUNK);
                out.write(plain, 2 * CHUNK, 5);
            }
            assertEquals(plain.length, raw.getFileStatus(path).getLen());
            assertArrayEquals(plain, readAll(raw, path));
        }

        Path path = fixture.sealedPath("checksummed");
        try (FSDataOutputStream out = fs.create(path, false)) {
            out.write(plain, 0, 2 * CHUNK);
            out.hflush();
            IOException early = assertThrows(IOException.class, () -> readAll(fs, path));
            assertTrue(early instanceof StreamAuthenticationException || early.getMessage().contains("still being written"),
                    early.toString());
            out.write(plain, 2 * CHUNK, 5);
        }
        assertArrayEquals(plain, readAll(fs, path));
    }

    /** The test's configuration on Hadoop's raw local file system (no checksums, no buffer kept back). */
    private Configuration rawLocal() {
        Configuration raw = new Configuration(fixture.conf);
        raw.set("fs.file.impl", org.apache.hadoop.fs.RawLocalFileSystem.class.getName());
        raw.setBoolean("fs.file.impl.disable.cache", true);
        return raw;
    }

    /**
     * Block locations (HDFS's, in 1 MiB blocks) come back as the plaintext each stored block
     * holds, back to back from 0 to the end: also the block that holds only the end of a final
     * chunk that began in the block before, which a range ending at the start of the final chunk
     * missed. A block holding nothing but the final tag holds no plaintext and is left out.
     */
    @Test
    void blockLocationsCoverThePlaintextOfEveryStoredBlock() {
        long block = 1 << 20;
        int sealedChunk = CHUNK + 16;
        long inFirst = block - GcmStreams.HEADER_LENGTH - 63L * sealedChunk; // of chunk 63: 15,320 bytes

        long across = 63L * CHUNK + 15_500; // the final chunk: 15,320 bytes in block 0, 180 and the tag in block 1
        long stored = GcmStreams.ciphertextLength(across);
        assertArrayEquals(new long[] {GcmStreams.HEADER_LENGTH, stored}, SealedFileSystem.storedRange(0, across, across),
                "the whole file: to its final tag");
        assertArrayEquals(new long[] {GcmStreams.HEADER_LENGTH, stored},
                SealedFileSystem.storedRange(0, Long.MAX_VALUE, across), "no overflow");
        BlockLocation[] blocks = SealedFileSystem.toPlaintext(blocks(block, stored), across);
        assertEquals(2, blocks.length);
        assertEquals(0, blocks[0].getOffset());
        assertEquals(63L * CHUNK + inFirst, blocks[0].getLength());
        assertEquals(63L * CHUNK + inFirst, blocks[1].getOffset());
        assertEquals(across, blocks[1].getOffset() + blocks[1].getLength());

        long tagOnly = 63L * CHUNK + inFirst - 15; // block 1 holds one byte: the final tag's last
        assertEquals(block + 1, GcmStreams.ciphertextLength(tagOnly));
        BlockLocation[] one = SealedFileSystem.toPlaintext(blocks(block, block + 1), tagOnly);
        assertEquals(1, one.length, "the tag's block holds no plaintext");
        assertEquals(tagOnly, one[0].getLength());

        // Ranges inside: from the chunk holding the start to the end of the chunk holding the last byte.
        long h = GcmStreams.HEADER_LENGTH;
        assertArrayEquals(new long[] {h + 2L * sealedChunk, h + 4L * sealedChunk},
                SealedFileSystem.storedRange(2L * CHUNK + 5, CHUNK + 100, across));
        assertArrayEquals(new long[] {h + 2L * sealedChunk, h + 3L * sealedChunk},
                SealedFileSystem.storedRange(2L * CHUNK + 5, CHUNK - 5, across), "ends at the chunk's end");
        assertArrayEquals(new long[] {h + 2L * sealedChunk, h + 3L * sealedChunk},
                SealedFileSystem.storedRange(2L * CHUNK + 5, 0, across), "len 0: the chunk holding start");
        assertArrayEquals(new long[] {h, h + sealedChunk}, SealedFileSystem.storedRange(0, CHUNK, CHUNK),
                "a file of one whole chunk: not its final empty chunk, which holds no plaintext");
    }

    /** Stored blocks of {@code size} bytes over a file of {@code length} bytes. */
    private static BlockLocation[] blocks(long size, long length) {
        List<BlockLocation> blocks = new ArrayList<>();
        for (long offset = 0; offset < length; offset += size) {
            blocks.add(new BlockLocation(new String[] {"dn:9866"}, new String[] {"dn"}, offset, Math.min(size, length - offset)));
        }
        return blocks.toArray(new BlockLocation[0]);
    }

    @Test
    void appendTruncateConcatAndPartialChunkFlushesAreRefusedWithAReason() throws IOException {
        Path path = fixture.sealedPath("u");
        write(fs, path, data(10, 1));
        UnsupportedOperationException append = assertThrows(UnsupportedOperationException.class, () -> fs.append(path));
        assertTrue(append.getMessage().contains("write a new file instead"), append.getMessage());
        assertThrows(UnsupportedOperationException.class, () -> fs.truncate(path, 5));
        assertThrows(UnsupportedOperationException.class, () -> fs.concat(path, new Path[] {path}));
        assertThrows(UnsupportedOperationException.class, () -> fs.create(path, FsPermission.getFileDefault(),
                EnumSet.of(CreateFlag.CREATE, CreateFlag.APPEND), 4096, (short) 1, 1 << 20, null, null));
        assertFalse(fs.hasPathCapability(path, "fs.capability.paths.append"));

        byte[] plain = data(2 * CHUNK + 1, 2);
        try (FSDataOutputStream out = fs.create(fixture.sealedPath("flushed"))) {
            assertFalse(out.hasCapability(StreamCapabilities.HFLUSH));
            out.hflush(); // at 0: the header
            out.write(plain, 0, 2 * CHUNK);
            out.hsync(); // at a chunk boundary: the sealed chunks go to the wrapped stream's hsync
            out.write(plain, 2 * CHUNK, 1);
            UnsupportedOperationException partial = assertThrows(UnsupportedOperationException.class, out::hflush);
            assertTrue(partial.getMessage().contains("at byte " + (2 * CHUNK + 1)), partial.getMessage());
        }
        assertArrayEquals(plain, readAll(fs, fixture.sealedPath("flushed")));
    }

    @Test
    void partialChunkFlushesNameTheDowngradeAndWithItFlushWholeChunksOnly() throws IOException {
        byte[] plain = data(3 * CHUNK + 7, 3);
        try (FSDataOutputStream out = fs.create(fixture.sealedPath("refused"))) {
            out.write(plain, 0, CHUNK + 1);
            UnsupportedOperationException refused = assertThrows(UnsupportedOperationException.class, out::hsync);
            assertTrue(refused.getMessage().contains(SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS + "=true"),
                    refused.getMessage());
        }

        Configuration downgrade = rawLocal();
        downgrade.setBoolean(SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS, true);
        try (FileSystem lenient = FileSystem.get(java.net.URI.create("sfile:///"), downgrade)) {
            Path path = fixture.sealedPath("downgraded");
            try (FSDataOutputStream out = lenient.create(path)) {
                out.write(plain, 0, 2 * CHUNK + 100);
                out.hflush(); // the header and two whole chunks reach the file; the partial one stays
                assertEquals(GcmStreams.HEADER_LENGTH + 2 * (CHUNK + 16), Files.size(dir.resolve("downgraded")));
                out.write(plain, 2 * CHUNK + 100, CHUNK - 100);
                out.hsync(); // at a boundary: the real hsync
                out.write(plain, 3 * CHUNK, 7);
                out.hsync();
            }
            assertArrayEquals(plain, readAll(lenient, path));
        }

        Configuration typo = new Configuration(fixture.conf);
        typo.set(SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS, "yes");
        assertMessage(typo, "must be true or false, not yes");
    }

    @Test
    void configurationMistakesFailWithTheKeyToSet() throws IOException {
        Configuration noWraps = new Configuration(fixture.conf);
        noWraps.unset(SealedFileSystem.wrapsKey("sfile"));
        assertMessage(noWraps, "sealpipe.fs.sfile.wraps is not set");

        Configuration loop = new Configuration(fixture.conf);
        loop.set(SealedFileSystem.wrapsKey("sfile"), "sfile");
        assertMessage(loop, "is a sealed scheme itself");

        Configuration noProvider = new Configuration(fixture.conf);
        noProvider.unset(SealedFileSystem.KEY_PROVIDER_PATH);
        assertMessage(noProvider, "sealpipe.fs.key.provider.path is not set");

        Configuration noName = new Configuration(fixture.conf);
        noName.unset(SealedFileSystem.KEY_NAME);
        assertMessage(noName, "sealpipe.fs.key.name is not set");

        Configuration missingKey = new Configuration(fixture.conf);
        missingKey.set(SealedFileSystem.KEY_NAME, "nosuchkey");
        assertMessage(missingKey, "there is no key 'nosuchkey'");

        Configuration badParallelism = new Configuration(fixture.conf);
        badParallelism.setInt(SealedFileSystem.PARALLELISM, 0);
        assertMessage(badParallelism, "sealpipe.fs.parallelism must be 1..");

        Configuration compress = new Configuration(fixture.conf);
        compress.set(SealedFileSystem.COMPRESS, "zstd");
        assertMessage(compress, "sealpipe.fs.compress=zstd is not a compression sealed files know");

        fixture.createKey("short", 128);
        Configuration shortKey = new Configuration(fixture.conf);
        shortKey.set(SealedFileSystem.KEY_NAME, "short");
        try (FileSystem sealed = FileSystem.get(java.net.URI.create("sfile:///"), shortKey)) {
            IOException e = assertThrows(IOException.class, () -> sealed.create(fixture.sealedPath("x")));
            assertTrue(e.getMessage().contains("is 128 bits; sealed files are written with 256-bit keys"), e.getMessage());
            assertFalse(Files.exists(dir.resolve("x")), "nothing is created");
        }
    }

    private static void assertMessage(Configuration conf, String expected) {
        Exception e = assertThrows(Exception.class, () -> FileSystem.get(java.net.URI.create("sfile:///"), conf).close());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
