package io.sealpipe.hadoop;

import static io.sealpipe.hadoop.SealedFixture.data;
import static io.sealpipe.hadoop.SealedFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.TextLikeData;
import io.sealpipe.internal.hadoop.SealedKeys;
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
        byte[] plain = new byte[(3 << 20) + 12345]; // a short last frame
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

        // Cut short, at a length a message can have: its end (where a compressed file's length
        // is) does not authenticate, so it lists as a plain file would, and open fails.
        replaceStored(Arrays.copyOf(original, original.length - 100));
        long cut = GcmStreams.plaintextLength(original.length - 100);
        assertEquals(cut, fs.getFileStatus(path).getLen());
        assertEquals(cut, fs.listStatus(path)[0].getLen());
        assertThrows(StreamAuthenticationException.class, () -> fs.open(path));
        // Cut after whole chunks (a length no message has, as while it is written): the same.
        replaceStored(Arrays.copyOf(original, GcmStreams.HEADER_LENGTH + 3 * (16384 + 16)));
        assertEquals(3 * 16384 + 1, fs.getFileStatus(path).getLen());
        assertThrows(StreamAuthenticationException.class, () -> fs.open(path));

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

    @Test
    void aReadTouchesOneFrameAndAClosedStreamRefusesReadsOfDecodedFrames() throws IOException {
        byte[] plain = data(3 << 20, 8); // random: stored frames, about 4 chunks each
        Path path = fixture.sealedPath("r");
        write(fs, path, plain);
        FSDataInputStream in = fs.open(path);
        byte[] got = new byte[100];
        in.readFully(1_500_000, got);
        assertArrayEquals(Arrays.copyOfRange(plain, 1_500_000, 1_500_100), got);
        long opened = in.getIOStatistics().counters().get(SealedFileSystem.CHUNKS_OPENED);
        assertTrue(opened <= 8, "the final chunk, the index's and one frame's, not " + opened + " of about 200");

        java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(70_000);
        in.seek(2_000_000);
        while (direct.hasRemaining()) {
            assertTrue(in.read(direct) > 0);
        }
        direct.flip();
        byte[] copy = new byte[70_000];
        direct.get(copy);
        assertArrayEquals(Arrays.copyOfRange(plain, 2_000_000, 2_070_000), copy, "a direct buffer");

        in.close();
        assertThrows(IOException.class, () -> in.readFully(1_500_000, got), "a frame decoded before close");
        assertThrows(IOException.class, () -> in.read(1_500_000, got, 0, 1));
    }

    /**
     * Contents that the key holder sealed but that are not what the writer makes: each read fails
     * with an IOException saying what is wrong, not with wrong bytes or an unchecked exception.
     */
    @Test
    void authenticatedButMalformedContentsFailWithTheReason() throws IOException {
        byte[] plain = TextLikeData.generate(12, 3 * FRAME + 7);
        java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
        try (SnappyIndexedOutputStream out = new SnappyIndexedOutputStream(buffer)) {
            out.write(plain);
        }
        byte[] content = buffer.toByteArray();
        int trailer = content.length - 20;
        int offsets = trailer - 4 - 8 * 4; // one offset chunk of 4 frames
        long frame1 = SnappyIndexedOutputStream.longLe(content, offsets + 4 + 8);

        assertArrayEquals(plain, readSealedContent(content), "the content as written");
        assertMalformed(content, c -> c[offsets + 4] = 11, "frame 0 is indexed at 11");
        assertMalformed(content, c -> c[trailer + 4 + 1] ^= 1, "frame 3 holds 7 bytes, not 263"); // U + 256
        assertMalformed(content, c -> c[trailer + 4 + 2] ^= 1, "frame index is inconsistent"); // U + 65536: 5 frames
        assertMalformed(content, c -> c[content.length - 1] = 'Y', "does not end with sealpipe's frame index");
        assertMalformed(content, c -> c[(int) frame1] = 0x02, "frame 1 is not a data frame");
        assertMalformed(content, c -> c[offsets] = (byte) 0x81, "offset chunk for frames 0..");
        assertMalformed(content, c -> c[0] = 0, "does not start with the Snappy stream identifier");
        assertMalformed(Arrays.copyOf(content, 25), c -> { }, "shorter than the smallest compressed file");
    }

    private interface Change {
        void apply(byte[] content);
    }

    private void assertMalformed(byte[] content, Change change, String reason) throws IOException {
        byte[] changed = content.clone();
        change.apply(changed);
        IOException e = assertThrows(IOException.class, () -> readSealedContent(changed), reason);
        assertTrue(e.getMessage().contains(reason), e.getMessage());
    }

    /** Seals {@code content} as a compressed file's message under the key, then reads it through fs. */
    private byte[] readSealedContent(byte[] content) throws IOException {
        byte[] key = fixture.provider().getCurrentKey(SealedFixture.KEY).getMaterial();
        GcmStreams streams = GcmStreams.builder().key(key).context(SealedKeys.SNAPPY_CONTEXT).build();
        try (FSDataOutputStream stored = fixture.local().create(fixture.storedPath("m"), true);
                java.io.OutputStream out = streams.encrypt(stored)) {
            out.write(content);
        }
        return readAll(fs, fixture.sealedPath("m"));
    }

    @Test
    void aWriteThatFailedNeverFinishesTheContent() throws IOException {
        java.io.OutputStream failing = new java.io.OutputStream() {
            private int writes;

            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                if (++writes == 4) {
                    throw new IOException("disk full");
                }
            }
        };
        SnappyIndexedOutputStream out = new SnappyIndexedOutputStream(failing);
        byte[] frame = data(FRAME, 1);
        out.write(frame); // random data: a stored frame, its header and its data (writes 2 and 3)
        assertThrows(IOException.class, () -> out.write(frame)); // frame 1's header fails
        IOException e = assertThrows(IOException.class, out::finish);
        assertTrue(e.getMessage().contains("cannot be finished"), e.getMessage());
    }

    @Test
    void scaledBlockLocationsAreBackToBackAndKeepOnlyTheRangeAsked() {
        org.apache.hadoop.fs.BlockLocation[] stored = new org.apache.hadoop.fs.BlockLocation[3];
        for (int i = 0; i < 3; i++) {
            stored[i] = new org.apache.hadoop.fs.BlockLocation(new String[] {"h" + i}, new String[] {"h" + i}, 100L * i, 100);
        }
        org.apache.hadoop.fs.BlockLocation[] all = SealedFileSystem.scaled(stored.clone(), 300, 600, 0, 600);
        assertEquals(3, all.length);
        for (int i = 0; i < 3; i++) {
            assertEquals(200L * i, all[i].getOffset());
            assertEquals(200, all[i].getLength());
        }
        org.apache.hadoop.fs.BlockLocation[] middle = SealedFileSystem.scaled(copies(stored), 300, 600, 250, 10);
        assertEquals(1, middle.length);
        assertEquals(200, middle[0].getOffset());
    }

    private static org.apache.hadoop.fs.BlockLocation[] copies(org.apache.hadoop.fs.BlockLocation[] blocks) {
        org.apache.hadoop.fs.BlockLocation[] c = new org.apache.hadoop.fs.BlockLocation[blocks.length];
        for (int i = 0; i < blocks.length; i++) {
            c[i] = new org.apache.hadoop.fs.BlockLocation(new String[] {"h" + i}, new String[] {"h" + i}, 100L * i, 100);
        }
        return c;
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
