package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link SealedFileSystem} on HDFS: {@code shdfs} over {@code hdfs} on a MiniDFSCluster (one
 * DataNode, 1 MiB blocks, so that files cross blocks), keys in JCEKS keystores in a temporary
 * directory. Proves that files from 0 bytes to 20 MiB round trip; that statuses and listings
 * give plaintext lengths, block locations cover the plaintext, and the stored {@code hdfs://}
 * file is one Cobblestone message of {@link GcmStreams#ciphertextLength} bytes that
 * {@link GcmStreams} decrypts under the key's material; that thousands of seeks and positioned
 * reads from several threads at once return the right bytes; that renamed files stay readable;
 * that after a key roll old files read with the old version and new files are written with the
 * new one; and that a stored file with one flipped bit fails on that chunk only (naming the path
 * and the chunk), a shortened one fails, and another keystore's key fails at open.
 */
class SealedHdfsTest {
    private static final int CHUNK = 16 * 1024;
    private static final int SEALED_CHUNK = CHUNK + 16;
    private static final int BLOCK_SIZE = 1024 * 1024;
    private static final String KEY = "data";
    private static final String SCHEME = "shdfs";

    @TempDir
    static java.nio.file.Path keys;

    private static MiniDFSCluster cluster;
    private static Configuration clusterConf;
    /** The cluster's file system, for the stored bytes. */
    private static DistributedFileSystem hdfs;
    /** The key of {@link #sealed}, never rolled. */
    private static URI keystore;
    /** shdfs over the cluster, on {@link #keystore}. */
    private static FileSystem sealed;

    @BeforeAll
    static void startCluster() throws IOException {
        java.nio.file.Path base = java.nio.file.Path.of("target", "sealed-hdfs").toAbsolutePath();
        TestFiles.deleteRecursively(base);
        Files.createDirectories(base);
        clusterConf = MiniHdfs.conf(BLOCK_SIZE);
        cluster = new MiniDFSCluster.Builder(clusterConf, base.resolve("dfs").toFile()).numDataNodes(1).build();
        cluster.waitActive();
        hdfs = cluster.getFileSystem();

        keystore = createKeystore("keys.jceks");
        sealed = newSealed(keystore);
    }

    @AfterAll
    static void stopCluster() throws IOException {
        try {
            if (sealed != null) {
                sealed.close();
            }
        } finally {
            if (cluster != null) {
                cluster.shutdown();
            }
        }
    }

    /** A keystore in the temporary directory with a fresh 256-bit key {@value #KEY}. */
    private static URI createKeystore(String name) throws IOException {
        URI uri = URI.create("jceks://file" + keys.resolve(name).toAbsolutePath());
        KeyProvider provider = KeyProviderFactory.get(uri, new Configuration(false));
        try {
            KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
            options.setBitLength(256);
            options.setCipher("AES/CTR/NoPadding");
            provider.createKey(KEY, options);
            provider.flush();
        } catch (NoSuchAlgorithmException e) {
            throw new IOException(e);
        } finally {
            provider.close();
        }
        return uri;
    }

    /** A SealedFileSystem of its own (not Hadoop's shared one) over the cluster, keys in {@code keystore}. */
    private static FileSystem newSealed(URI keystore) throws IOException {
        Configuration conf = new Configuration(clusterConf);
        conf.set("fs." + SCHEME + ".impl", SealedFileSystem.class.getName());
        conf.set(SealedFileSystem.wrapsKey(SCHEME), "hdfs");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, keystore.toString());
        conf.set(SealedFileSystem.KEY_NAME, KEY);
        FileSystem fs = FileSystem.newInstance(URI.create(SCHEME + "://" + cluster.getURI().getAuthority() + "/"), conf);
        assertInstanceOf(SealedFileSystem.class, fs);
        return fs;
    }

    /** The GcmStreams of version {@code version} of the key in {@code keystore}, or of the current one if null. */
    private static GcmStreams keyVersion(URI keystore, String version) throws IOException {
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        try {
            KeyProvider.KeyVersion key = version == null ? provider.getCurrentKey(KEY) : provider.getKeyVersion(version);
            return GcmStreams.builder().key(key.getMaterial()).build();
        } finally {
            provider.close();
        }
    }

    private static Path sealedPath(String path) {
        return new Path(SCHEME, cluster.getURI().getAuthority(), path);
    }

    private static Path storedPath(String path) {
        return new Path("hdfs", cluster.getURI().getAuthority(), path);
    }

    private static byte[] data(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Writes {@code data} in pieces: single bytes first, then pieces of random lengths. */
    private static void write(FileSystem fs, Path path, byte[] data) throws IOException {
        Random random = new Random(data.length * 31L + path.hashCode());
        try (FSDataOutputStream out = fs.create(path, false)) {
            int i = 0;
            while (i < data.length) {
                int n = i < 33 ? 1 : Math.min(data.length - i, 1 + random.nextInt(100_000));
                out.write(data, i, n);
                i += n;
            }
        }
    }

    private static byte[] readAll(FileSystem fs, Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    /** Replaces the stored file with {@code bytes}, through HDFS. */
    private static void replaceStored(String path, byte[] bytes) throws IOException {
        try (FSDataOutputStream out = hdfs.create(storedPath(path), true)) {
            out.write(bytes);
        }
    }

    /**
     * 63 chunks and 15,500 bytes: the final chunk starts in the first stored block and ends in the
     * second, which holds the last 196 bytes (180 of plaintext, then the tag).
     */
    private static final int FINAL_CHUNK_ACROSS_BLOCKS = 63 * CHUNK + 15_500;

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 1, FINAL_CHUNK_ACROSS_BLOCKS, BLOCK_SIZE + 7,
            20 * BLOCK_SIZE})
    void roundTripsAndStoresOneMessageThatGcmStreamsDecrypts(int size) throws IOException {
        String name = "/roundtrip/" + size;
        Path path = sealedPath(name);
        byte[] plain = data(size, size);
        write(sealed, path, plain);

        FileStatus status = sealed.getFileStatus(path);
        assertEquals(size, status.getLen(), "status");
        assertTrue(status.isFile() && status.isEncrypted(), status::toString);
        assertEquals(path, status.getPath());
        FileStatus listed = Arrays.stream(sealed.listStatus(sealedPath("/roundtrip")))
                .filter(s -> s.getPath().equals(path))
                .findFirst()
                .orElseThrow(() -> new AssertionError(path + " not listed"));
        assertEquals(size, listed.getLen(), "listing");

        long storedLength = hdfs.getFileStatus(storedPath(name)).getLen();
        assertEquals(GcmStreams.ciphertextLength(size), storedLength, "stored length");
        byte[] stored = readAll(hdfs, storedPath(name));
        GcmStreams key = keyVersion(keystore, null);
        try (InputStream in = key.decrypt(new ByteArrayInputStream(stored))) {
            assertArrayEquals(plain, in.readAllBytes(), "GcmStreams over the stored hdfs:// file");
        } finally {
            key.destroy();
        }
        assertArrayEquals(plain, readAll(sealed, path), "read through shdfs");

        if (size > 0) {
            assertBlocksCoverThePlaintext(status, storedLength);
        }
    }

    /**
     * The block locations of the whole file: one per stored 1 MiB block, their plaintext ranges
     * back to back from 0 to the plaintext length.
     */
    private static void assertBlocksCoverThePlaintext(FileStatus status, long storedLength) throws IOException {
        BlockLocation[] blocks = sealed.getFileBlockLocations(status, 0, status.getLen());
        Arrays.sort(blocks, Comparator.comparingLong(BlockLocation::getOffset));
        assertEquals((storedLength + BLOCK_SIZE - 1) / BLOCK_SIZE, blocks.length, "blocks");
        long next = 0;
        for (BlockLocation block : blocks) {
            assertEquals(next, block.getOffset(), () -> Arrays.toString(blocks));
            assertTrue(block.getHosts().length > 0, block::toString);
            next += block.getLength();
        }
        assertEquals(status.getLen(), next, () -> Arrays.toString(blocks));
    }

    /**
     * Four threads start together on a file of five blocks and more: two seek and read fully on
     * streams of their own, two make positioned reads on one shared stream and move its position
     * between them. Each checks every byte it gets.
     */
    @Test
    void seeksAndPositionedReadsFromSeveralThreads() throws Exception {
        int threads = 4;
        int readsPerThread = 1000;
        byte[] plain = data(5 * BLOCK_SIZE + 123, 11);
        Path path = sealedPath("/random/f");
        write(sealed, path, plain);

        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try (FSDataInputStream shared = sealed.open(path)) {
            List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                boolean positioned = t % 2 == 0;
                long seed = t;
                results.add(pool.submit(() -> {
                    start.await();
                    Random random = new Random(seed);
                    long checked = 0;
                    try (FSDataInputStream own = sealed.open(path)) {
                        for (int i = 0; i < readsPerThread; i++) {
                            int at = random.nextInt(plain.length + 1);
                            int len = Math.min(plain.length - at,
                                    random.nextInt(4) == 0 ? random.nextInt(3 * CHUNK) : random.nextInt(500));
                            byte[] got = new byte[len];
                            String where = len + " bytes at " + at;
                            if (positioned) {
                                if (random.nextBoolean()) {
                                    shared.readFully(at, got, 0, len);
                                } else {
                                    int n = len == 0 ? 0 : shared.read(at, got, 0, len);
                                    assertTrue(n > 0 || len == 0, where + ": read " + n);
                                    got = Arrays.copyOf(got, n);
                                }
                                shared.seek(random.nextInt(plain.length)); // the position moves under the positioned reads
                                shared.read();
                            } else {
                                own.seek(at);
                                assertEquals(at, own.getPos(), where);
                                own.readFully(got);
                                assertEquals(at + len, own.getPos(), where);
                            }
                            assertArrayEquals(Arrays.copyOfRange(plain, at, at + got.length), got, where);
                            checked += got.length;
                        }
                        if (!positioned) {
                            own.seek(plain.length);
                            assertEquals(-1, own.read(), "at the end");
                        }
                    }
                    return checked;
                }));
            }
            start.countDown();
            long total = 0;
            for (Future<Long> result : results) {
                total += result.get();
            }
            assertTrue(total > threads * readsPerThread * 1000L, "bytes checked: " + total);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A directory's summary: the plaintext length of its files, and the stored tree's counts,
     * space consumed and quotas (name, space and per storage type) as HDFS reports them.
     */
    @Test
    void aSummaryHasThePlaintextLengthsAndTheStoredTreesQuotas() throws IOException {
        Path dir = sealedPath("/summary");
        write(sealed, new Path(dir, "a"), data(100_000, 5));
        write(sealed, new Path(dir, "b/c"), data(7, 6));
        Path stored = storedPath("/summary");
        hdfs.setQuota(stored, 1000, 1L << 40);
        hdfs.setQuotaByStorageType(stored, StorageType.SSD, 1L << 30);
        ContentSummary plain = hdfs.getContentSummary(stored);
        ContentSummary summary = sealed.getContentSummary(dir);
        assertEquals(100_007, summary.getLength());
        assertEquals(2, summary.getFileCount());
        assertEquals(2, summary.getDirectoryCount());
        assertEquals(plain.getSpaceConsumed(), summary.getSpaceConsumed(), "the stored bytes' space");
        assertEquals(1000, summary.getQuota());
        assertEquals(1L << 40, summary.getSpaceQuota());
        assertEquals(1L << 30, summary.getTypeQuota(StorageType.SSD));
        assertEquals(plain.getTypeConsumed(StorageType.DISK), summary.getTypeConsumed(StorageType.DISK));
    }

    /** A file renamed, then its directory: the stored file moves, and it reads the same. */
    @Test
    void aRenamedFileReadsTheSame() throws IOException {
        byte[] plain = data(3 * CHUNK + 11, 3);
        write(sealed, sealedPath("/rename/a"), plain);
        assertTrue(sealed.mkdirs(sealedPath("/rename/sub")));

        assertTrue(sealed.rename(sealedPath("/rename/a"), sealedPath("/rename/sub/b")));
        assertFalse(sealed.exists(sealedPath("/rename/a")));
        assertFalse(hdfs.exists(storedPath("/rename/a")));
        assertEquals(GcmStreams.ciphertextLength(plain.length), hdfs.getFileStatus(storedPath("/rename/sub/b")).getLen());
        assertArrayEquals(plain, readAll(sealed, sealedPath("/rename/sub/b")));

        assertTrue(sealed.rename(sealedPath("/rename/sub"), sealedPath("/renamed")));
        assertEquals(plain.length, sealed.getFileStatus(sealedPath("/renamed/b")).getLen());
        assertArrayEquals(plain, readAll(sealed, sealedPath("/renamed/b")));
    }

    /**
     * A key roll (another process's KeyProvider: rollNewVersion and flush): a file written before
     * it reads with the old version, a new instance writes with the new one, and the instance
     * made before the roll reads both (it reloads its provider for the new version).
     */
    @Test
    void afterAKeyRollOldFilesReadAndNewFilesUseTheNewVersion() throws IOException, NoSuchAlgorithmException {
        URI rolled = createKeystore("roll.jceks");
        byte[] before = data(2 * CHUNK + 9, 21);
        byte[] after = data(BLOCK_SIZE + 3, 22);
        try (FileSystem old = newSealed(rolled)) {
            write(old, sealedPath("/roll/old"), before);
            String v0;
            KeyProvider provider = KeyProviderFactory.get(rolled, new Configuration(false));
            try {
                v0 = provider.getCurrentKey(KEY).getVersionName();
                provider.rollNewVersion(KEY);
                provider.flush();
            } finally {
                provider.close();
            }
            try (FileSystem fresh = newSealed(rolled)) {
                write(fresh, sealedPath("/roll/new"), after);
                assertArrayEquals(before, readAll(fresh, sealedPath("/roll/old")), "old file, new instance");
                assertArrayEquals(after, readAll(fresh, sealedPath("/roll/new")), "new file, new instance");
            }
            assertArrayEquals(after, readAll(old, sealedPath("/roll/new")), "new file, instance from before the roll");
            assertArrayEquals(before, readAll(old, sealedPath("/roll/old")), "old file, instance from before the roll");

            GcmStreams first = keyVersion(rolled, v0);
            GcmStreams current = keyVersion(rolled, null);
            try {
                byte[] oldHeader = header("/roll/old");
                byte[] newHeader = header("/roll/new");
                assertTrue(first.matchesHeader(oldHeader), "old file: " + v0);
                assertFalse(current.matchesHeader(oldHeader), "old file: the new version");
                assertTrue(current.matchesHeader(newHeader), "new file: the new version");
                assertFalse(first.matchesHeader(newHeader), "new file: " + v0);
            } finally {
                first.destroy();
                current.destroy();
            }
        }
    }

    private static byte[] header(String path) throws IOException {
        byte[] header = new byte[GcmStreams.HEADER_LENGTH];
        try (FSDataInputStream in = hdfs.open(storedPath(path))) {
            in.readFully(0, header);
        }
        return header;
    }

    /**
     * One bit flipped in a chunk in the stored file's second block: reading through it fails
     * with a StreamAuthenticationException naming the path and the chunk, and no byte of that
     * chunk is returned; every other chunk still reads, by position and by seek.
     */
    @Test
    void oneFlippedStoredBitFailsTheReadsOfItsChunkOnly() throws IOException {
        int tampered = 66; // stored from byte 56 + 66 * 16400 = 1,082,456: in the second block
        byte[] plain = data(70 * CHUNK + 100, 31);
        String name = "/tamper/f";
        Path path = sealedPath(name);
        write(sealed, path, plain);
        byte[] stored = readAll(hdfs, storedPath(name));
        stored[GcmStreams.HEADER_LENGTH + tampered * SEALED_CHUNK + 1000] ^= 0x10;
        replaceStored(name, stored);
        String qualified = sealed.makeQualified(path).toString();

        try (FSDataInputStream in = sealed.open(path)) {
            StreamAuthenticationException e = assertThrows(StreamAuthenticationException.class, in::readAllBytes);
            assertEquals(tampered, e.chunk());
            assertTrue(e.getMessage().contains(qualified) && e.getMessage().contains("chunk " + tampered), e.getMessage());

            byte[] head = new byte[tampered * CHUNK];
            in.readFully(0, head);
            assertArrayEquals(Arrays.copyOf(plain, head.length), head, "the chunks before");
            byte[] tail = new byte[plain.length - (tampered + 1) * CHUNK];
            in.readFully((tampered + 1) * CHUNK, tail);
            assertArrayEquals(Arrays.copyOfRange(plain, (tampered + 1) * CHUNK, plain.length), tail, "the chunks after");
            in.seek((tampered + 1) * CHUNK + 5);
            byte[] sequential = new byte[CHUNK];
            in.readFully(sequential);
            assertArrayEquals(Arrays.copyOfRange(plain, (tampered + 1) * CHUNK + 5, (tampered + 2) * CHUNK + 5), sequential,
                    "a seek past the chunk");

            byte[] untouched = new byte[300];
            Arrays.fill(untouched, (byte) 0x5a);
            StreamAuthenticationException positioned = assertThrows(StreamAuthenticationException.class,
                    () -> in.readFully(tampered * CHUNK - 100, untouched));
            assertEquals(tampered, positioned.chunk());
            assertTrue(positioned.getMessage().contains(qualified), positioned.getMessage());
            for (int i = 100; i < untouched.length; i++) {
                assertEquals(0x5a, untouched[i], "byte " + i + " of the read: in the failed chunk");
            }
        }
    }

    /**
     * The stored file rewritten shorter: cut inside the final chunk (a length some message has)
     * it lists shorter but reading its end fails; cut after a whole chunk (a length no message
     * has, as while it is written) it lists with its whole chunks and a byte, reads those chunks,
     * and reading past them fails naming the path; cut inside the header, it lists as one byte
     * and open fails naming the path. It never reads as a valid shorter file.
     */
    @Test
    void aShortenedStoredFileFails() throws IOException {
        byte[] plain = data(3 * CHUNK + 500, 41);
        String name = "/cut/f";
        Path path = sealedPath(name);
        write(sealed, path, plain);
        byte[] stored = readAll(hdfs, storedPath(name));

        replaceStored(name, Arrays.copyOf(stored, stored.length - 100));
        assertEquals(plain.length - 100, sealed.getFileStatus(path).getLen());
        try (FSDataInputStream in = sealed.open(path)) {
            StreamAuthenticationException e = assertThrows(StreamAuthenticationException.class, in::readAllBytes);
            assertEquals(3, e.chunk(), e.getMessage());
            byte[] whole = new byte[3 * CHUNK];
            in.readFully(0, whole);
            assertArrayEquals(Arrays.copyOf(plain, whole.length), whole, "the whole chunks before the cut");
        }

        replaceStored(name, Arrays.copyOf(stored, GcmStreams.HEADER_LENGTH + 2 * SEALED_CHUNK));
        assertEquals(2 * CHUNK + 1, sealed.getFileStatus(path).getLen());
        assertEquals(2 * CHUNK + 1, sealed.listStatus(sealedPath("/cut"))[0].getLen());
        try (FSDataInputStream in = sealed.open(path)) {
            byte[] whole = new byte[2 * CHUNK];
            in.readFully(0, whole);
            assertArrayEquals(Arrays.copyOf(plain, whole.length), whole, "the whole chunks before the cut");
            assertThrows(StreamAuthenticationException.class, () -> in.readFully(0, new byte[2 * CHUNK + 1]));
            StreamAuthenticationException end = assertThrows(StreamAuthenticationException.class, in::readAllBytes);
            assertTrue(end.getMessage().contains(sealed.makeQualified(path).toString()), end.getMessage());
        }

        replaceStored(name, Arrays.copyOf(stored, 10));
        assertEquals(1, sealed.getFileStatus(path).getLen());
        IOException open = assertThrows(IOException.class, () -> sealed.open(path));
        assertTrue(open.getMessage().contains(sealed.makeQualified(path).toString()) && open.getMessage().contains("cut short"),
                open.getMessage());
    }

    /** Another keystore's key of the same name: the file's status lists, but open fails and decrypts nothing. */
    @Test
    void anotherKeystoresKeyFailsAtOpen() throws IOException {
        byte[] plain = data(CHUNK + 7, 51);
        Path path = sealedPath("/wrongkey/f");
        write(sealed, path, plain);
        try (FileSystem other = newSealed(createKeystore("other.jceks"))) {
            assertEquals(plain.length, other.getFileStatus(path).getLen());
            IOException e = assertThrows(IOException.class, () -> other.open(path));
            assertTrue(e.getMessage().contains(other.makeQualified(path).toString()), e.getMessage());
            assertTrue(e.getMessage().contains("no version of the key '" + KEY + "'")
                    && e.getMessage().contains("matches the file's key commitment"), e.getMessage());
        }
        assertArrayEquals(plain, readAll(sealed, path), "the right key still reads it");
    }
}
