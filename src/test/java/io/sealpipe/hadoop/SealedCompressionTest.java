package io.sealpipe.hadoop;

import static io.sealpipe.hadoop.SealedFixture.data;
import static io.sealpipe.hadoop.SealedFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.GcmStreams;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.internal.TextLikeData;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.SnappyFramedInputStream;

/**
 * {@code sealpipe.fs.compress=snappy}: files are Snappy framing streams with a frame index inside
 * the sealed message; statuses report the uncompressed length; any offset reads by decoding one
 * 64 KiB frame; files of both kinds live side by side.
 */
class SealedCompressionTest {
    private static final int FRAME = 65536;

    @TempDir
    java.nio.file.Path dir;

    private SealedFixture fixture;
    private FileSystem fs;

    @BeforeEach
    void setUp() throws IOException {
        fixture = new SealedFixture(dir);
        fs = FileSystem.get(URI.create("sfile:///"), compressing(fixture.conf));
    }

    @AfterEach
    void tearDown() throws IOException {
        fs.close();
    }

    private static Configuration compressing(Configuration base) {
        Configuration conf = new Configuration(base);
        conf.set(SealedFileSystem.COMPRESS, "snappy");
        return conf;
    }

    private static byte[] readAll(FileSystem fs, Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    @Test
    void roundTripsOnAndAroundFrameBoundariesReportTheUncompressedLength() throws IOException {
        for (int size : new int[] {0, 1, FRAME - 1, FRAME, FRAME + 1, 3 * FRAME + 7, 16384 * 5}) {
            Path path = fixture.sealedPath("f" + size);
            byte[] plain = TextLikeData.generate(size, size);
            write(fs, path, plain);
            assertEquals(size, fs.getFileStatus(path).getLen(), "status of " + size);
            assertEquals(size, fs.listStatus(path)[0].getLen(), "listing of " + size);
            assertArrayEquals(plain, readAll(fs, path), "content of " + size);
        }
    }

    @Test
    void textShrinksAndTheStoredFileIsAStandardSnappyStreamInsideTheMessage() throws IOException {
        byte[] plain = TextLikeData.generate(7, 5 << 20);
        Path path = fixture.sealedPath("text");
        write(fs, path, plain);
        long stored = Files.size(dir.resolve("text"));
        assertTrue(stored < plain.length * 3 / 4, "5 MiB of text stored in " + stored + " bytes");

        // Any implementation of the format, given the key and the context, opens the message; any
        // framed-Snappy reader decodes its content (skipping the index chunk).
        byte[] key = fixture.provider().getCurrentKey(SealedFixture.KEY).getMaterial();
        GcmStreams streams = GcmStreams.builder().key(key).context(SealedKeys.SNAPPY_CONTEXT).build();
        byte[] content;
        try (InputStream in = streams.decrypt(Files.newInputStream(dir.resolve("text")))) {
            content = in.readAllBytes();
        }
        try (InputStream in = new SnappyFramedInputStream(new ByteArrayInputStream(content))) {
            assertArrayEquals(plain, in.readAllBytes());
        }
    }

    @Test
    void randomSeeksAndPositionedReadsFromSeveralThreads() throws Exception {
        byte[] plain = new byte[3 << 20];
        byte[] text = TextLikeData.generate(3, plain.length / 2);
        System.arraycopy(text, 0, plain, 0, text.length);
        System.arraycopy(data(plain.length - text.length, 4), 0, plain, text.length, plain.length - text.length);
        Path path = fixture.sealedPath("mixed");
        write(fs, path, plain);

        try (FSDataInputStream in = fs.open(path)) {
            SplittableRandom random = new SplittableRandom(5);
            for (int i = 0; i < 500; i++) { // seek and read, this thread
                int at = random.nextInt(plain.length);
                int n = Math.min(random.nextInt(1, 3 * FRAME), plain.length - at);
                byte[] got = new byte[n];
                in.seek(at);
                in.readFully(got);
                assertArrayEquals(Arrays.copyOfRange(plain, at, at + n), got, "seek to " + at);
            }
            int threads = 4;
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                SplittableRandom r = new SplittableRandom(100 + t);
                Thread worker = new Thread(() -> {
                    try {
                        start.await();
                        for (int i = 0; i < 500; i++) {
                            int at = r.nextInt(plain.length);
                            int n = Math.min(r.nextInt(1, 2 * FRAME), plain.length - at);
                            byte[] got = new byte[n];
                            in.readFully(at, got);
                            assertArrayEquals(Arrays.copyOfRange(plain, at, at + n), got, "positioned read at " + at);
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                worker.start();
                workers.add(worker);
            }
            start.countDown();
            for (Thread worker : workers) {
                worker.join();
            }
            assertEquals(List.of(), failures);
            assertEquals(-1, in.read(plain.length, new byte[1], 0, 1), "a positioned read at the end");
        }
    }

    @Test
    void plainAndCompressedFilesLiveSideBySideAndAPlainFileSystemRefusesCompressedOnes() throws IOException {
        byte[] plain = TextLikeData.generate(9, 100_000);
        try (FileSystem plainFs = FileSystem.get(URI.create("sfile:///"), fixture.conf)) {
            write(plainFs, fixture.sealedPath("plain"), plain);
            write(fs, fixture.sealedPath("compressed"), plain);

            // The compressing file system reads both, with their content lengths.
            for (String name : new String[] {"plain", "compressed"}) {
                assertEquals(plain.length, fs.getFileStatus(fixture.sealedPath(name)).getLen(), name);
                assertArrayEquals(plain, readAll(fs, fixture.sealedPath(name)), name);
            }
            // One without compression would report the compressed length, so it refuses to read it.
            IOException refused = assertThrows(IOException.class, () -> readAll(plainFs, fixture.sealedPath("compressed")));
            assertTrue(refused.getMessage().contains("sealpipe.fs.compress=snappy"), refused.getMessage());
            assertArrayEquals(plain, readAll(plainFs, fixture.sealedPath("plain")));
        }
    }

    @Test
    void aChangedOrShortenedStoredFileFailsItsReads() throws IOException {
        byte[] plain = TextLikeData.generate(11, 10 * FRAME);
        Path path = fixture.sealedPath("t");
        write(fs, path, plain);
        byte[] original = Files.readAllBytes(dir.resolve("t"));

        byte[] flipped = original.clone();
        flipped[original.length / 2] ^= 1;
        replaceStored(flipped);
        try (FSDataInputStream in = fs.open(path)) {
            assertThrows(StreamAuthenticationException.class, in::readAllBytes);
        }

        replaceStored(Arrays.copyOf(original, original.length - 100)); // a length a message can have
        assertThrows(StreamAuthenticationException.class, () -> fs.getFileStatus(path));

        replaceStored(original);
        assertArrayEquals(plain, readAll(fs, path));
    }

    @Test
    void blockLocationsOfACompressedFileCoverItsContent() throws IOException {
        Path path = fixture.sealedPath("b");
        write(fs, path, TextLikeData.generate(1, 300_000));
        org.apache.hadoop.fs.FileStatus status = fs.getFileStatus(path);
        org.apache.hadoop.fs.BlockLocation[] blocks = fs.getFileBlockLocations(status, 0, status.getLen());
        assertEquals(0, blocks[0].getOffset());
        org.apache.hadoop.fs.BlockLocation last = blocks[blocks.length - 1];
        assertEquals(300_000, last.getOffset() + last.getLength());
        assertEquals(0, fs.getFileBlockLocations(status, 300_000, 10).length);
    }

    /** Replaces the stored file "t" through the local file system (its checksum file too). */
    private void replaceStored(byte[] bytes) throws IOException {
        try (FSDataOutputStream out = fixture.local().create(fixture.storedPath("t"), true)) {
            out.write(bytes);
        }
    }

    @Test
    void hflushOfACompressedFileIsRefusedWithTheReasonAndUnknownCompressionsFailAtStart() throws IOException {
        try (FSDataOutputStream out = fs.create(fixture.sealedPath("h"))) {
            out.write(new byte[4 * 16384]);
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, out::hflush);
            assertTrue(e.getMessage().contains("compressed sealed file"), e.getMessage());
        }
        assertEquals(4 * 16384, fs.getFileStatus(fixture.sealedPath("h")).getLen());

        Configuration lz4 = new Configuration(fixture.conf);
        lz4.set(SealedFileSystem.COMPRESS, "lz4");
        IOException e = assertThrows(IOException.class, () -> FileSystem.get(URI.create("sfile:///"), lz4));
        assertTrue(e.getMessage().contains("use none (the default) or snappy"), e.getMessage());
    }
}
