package io.sealpipe.hadoop;

import static io.sealpipe.hadoop.SealedFixture.data;
import static io.sealpipe.hadoop.SealedFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmStreams;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.function.IntFunction;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options.OpenFileOptions;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;
import org.apache.hadoop.util.functional.FutureIO;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code readVectored} and {@code openFile()} of {@link SealedFileSystem} over the local file
 * system: ranges read through the chunks that hold them (each chunk opened once), a tampered
 * chunk failing only its ranges, ends that must authenticate, and the status and options that
 * {@code openFile()} passes on.
 */
class SealedVectoredReadTest {
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

    private static IntFunction<ByteBuffer> allocator(boolean direct) {
        return n -> direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
    }

    private static byte[] bytes(FileRange range) throws IOException {
        ByteBuffer b = FutureIO.awaitFuture(range.getData());
        assertEquals(range.getLength(), b.remaining(), "the buffer holds the range, from position 0");
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private static long chunksOpened(FSDataInputStream in) {
        return IOStatisticsSupport.retrieveIOStatistics(in).counters().get(SealedFileSystem.CHUNKS_OPENED);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void rangesReadTheirPlaintextAndEachChunkOpensOnce(boolean direct) throws IOException {
        byte[] plain = data(20 * CHUNK + 123, 11);
        Path path = fixture.sealedPath("v");
        write(fs, path, plain);
        List<FileRange> ranges = new ArrayList<>();
        ranges.add(FileRange.createFileRange(5 * CHUNK + 10, 3 * CHUNK)); // chunks 5..8
        ranges.add(FileRange.createFileRange(100, 50)); // chunk 0
        ranges.add(FileRange.createFileRange(150, 10)); // chunk 0 again: opened once for both
        ranges.add(FileRange.createFileRange(8 * CHUNK + 20, 5)); // chunk 8, shared with the first
        ranges.add(FileRange.createFileRange(12 * CHUNK - 1, 2)); // chunks 11 and 12
        ranges.add(FileRange.createFileRange(plain.length - 123, 123)); // the final chunk, to the end
        try (FSDataInputStream in = fs.open(path)) {
            assertTrue(in.hasCapability(StreamCapabilities.VECTOREDIO));
            long before = chunksOpened(in);
            in.readVectored(ranges, allocator(direct));
            for (FileRange r : ranges) {
                assertArrayEquals(Arrays.copyOfRange(plain, (int) r.getOffset(), (int) r.getOffset() + r.getLength()), bytes(r),
                        "range at " + r.getOffset());
            }
            assertEquals(1 + 4 + 2 + 1, chunksOpened(in) - before, "chunks 0, 5-8, 11-12 and 20, each once");
        }
    }

    @Test
    void manyRandomRangesMatchPositionedReads() throws IOException {
        byte[] plain = data(64 * CHUNK + 7, 12);
        Path path = fixture.sealedPath("r");
        write(fs, path, plain);
        Random random = new Random(13);
        for (int round = 0; round < 20; round++) {
            List<FileRange> ranges = new ArrayList<>();
            long at = random.nextInt(CHUNK);
            while (true) {
                int length = random.nextInt(4) == 0 ? random.nextInt(3 * CHUNK) : random.nextInt(300);
                if (at + length > plain.length) {
                    break;
                }
                ranges.add(FileRange.createFileRange(at, length));
                at += length + (random.nextBoolean() ? 0 : random.nextInt(2 * CHUNK));
            }
            java.util.Collections.shuffle(ranges, random);
            try (FSDataInputStream in = fs.open(path)) {
                in.readVectored(ranges, allocator(round % 2 == 0));
                for (FileRange r : ranges) {
                    assertArrayEquals(Arrays.copyOfRange(plain, (int) r.getOffset(), (int) r.getOffset() + r.getLength()),
                            bytes(r), "round " + round + ", range at " + r.getOffset() + " of " + r.getLength());
                }
            }
        }
    }

    @Test
    void aTamperedChunkFailsOnlyTheRangesThatTouchIt() throws IOException {
        byte[] plain = data(6 * CHUNK + 100, 14);
        Path path = fixture.sealedPath("t");
        write(fs, path, plain);
        byte[] stored = Files.readAllBytes(dir.resolve("t"));
        stored[GcmStreams.HEADER_LENGTH + 3 * (CHUNK + 16) + 500] ^= 1; // in chunk 3
        try (FSDataOutputStream out = fixture.local().create(fixture.storedPath("t"), true)) {
            out.write(stored);
        }
        FileRange before = FileRange.createFileRange(2 * CHUNK, CHUNK - 20); // chunk 2, in the span of chunk 3
        FileRange across = FileRange.createFileRange(3 * CHUNK - 10, 20); // chunks 2 and 3
        FileRange inside = FileRange.createFileRange(3 * CHUNK + 100, 10); // chunk 3
        FileRange after = FileRange.createFileRange(4 * CHUNK, 2 * CHUNK + 100); // chunks 4 to the end
        try (FSDataInputStream in = fs.open(path)) {
            in.readVectored(List.of(before, across, inside, after), allocator(false));
            assertArrayEquals(Arrays.copyOfRange(plain, 2 * CHUNK, 3 * CHUNK - 20), bytes(before));
            assertArrayEquals(Arrays.copyOfRange(plain, 4 * CHUNK, plain.length), bytes(after));
            for (FileRange failed : List.of(across, inside)) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> failed.getData().get());
                StreamAuthenticationException cause = assertInstanceOf(StreamAuthenticationException.class, e.getCause());
                assertEquals(3, cause.chunk());
                assertTrue(cause.getMessage().contains(path.toString()), cause.getMessage());
            }
        }
    }

    @Test
    void aRangePastTheEndFailsWithEofOnlyOnceTheEndAuthenticates() throws IOException {
        byte[] plain = data(3 * CHUNK + 500, 15);
        Path path = fixture.sealedPath("e");
        write(fs, path, plain);
        try (FSDataInputStream in = fs.open(path)) {
            FileRange past = FileRange.createFileRange(plain.length - 10, 11);
            FileRange empty = FileRange.createFileRange(plain.length, 0);
            FileRange last = FileRange.createFileRange(plain.length - 10, 10);
            in.readVectored(List.of(past), allocator(false));
            assertInstanceOf(EOFException.class, assertThrows(ExecutionException.class, () -> past.getData().get()).getCause());
            in.readVectored(List.of(last), allocator(false));
            assertArrayEquals(Arrays.copyOfRange(plain, plain.length - 10, plain.length), bytes(last));
            in.readVectored(List.of(empty), allocator(false));
            assertEquals(0, bytes(empty).length);
            assertThrows(EOFException.class, () -> in.readVectored(List.of(FileRange.createFileRange(-1, 5)), allocator(false)));
            assertThrows(IllegalArgumentException.class, () -> in.readVectored(
                    List.of(FileRange.createFileRange(10, 20), FileRange.createFileRange(20, 5)), allocator(false)));
        }

        // Cut inside the final chunk: the length is a message's, but the end does not verify,
        // so a range past it is not an end of file.
        byte[] stored = Files.readAllBytes(dir.resolve("e"));
        try (FSDataOutputStream out = fixture.local().create(fixture.storedPath("e"), true)) {
            out.write(Arrays.copyOf(stored, stored.length - 100));
        }
        try (FSDataInputStream in = fs.open(path)) {
            FileRange past = FileRange.createFileRange(plain.length - 50, 100);
            FileRange whole = FileRange.createFileRange(0, CHUNK);
            in.readVectored(List.of(whole, past), allocator(false));
            assertArrayEquals(Arrays.copyOf(plain, CHUNK), bytes(whole));
            StreamAuthenticationException e = assertInstanceOf(StreamAuthenticationException.class,
                    assertThrows(ExecutionException.class, () -> past.getData().get()).getCause());
            assertEquals(3, e.chunk());
        }
        // Cut after two whole chunks: the listed length has one byte past them, which fails as cut short.
        try (FSDataOutputStream out = fixture.local().create(fixture.storedPath("e"), true)) {
            out.write(Arrays.copyOf(stored, GcmStreams.HEADER_LENGTH + 2 * (CHUNK + 16)));
        }
        try (FSDataInputStream in = fs.open(path)) {
            FileRange whole = FileRange.createFileRange(CHUNK, CHUNK - 10);
            FileRange cut = FileRange.createFileRange(2 * CHUNK - 5, 6);
            in.readVectored(List.of(whole, cut), allocator(true));
            assertArrayEquals(Arrays.copyOfRange(plain, CHUNK, 2 * CHUNK - 10), bytes(whole));
            StreamAuthenticationException e = assertInstanceOf(StreamAuthenticationException.class,
                    assertThrows(ExecutionException.class, () -> cut.getData().get()).getCause());
            assertTrue(e.getMessage().contains("cut short"), e.getMessage());
        }
    }

    @Test
    void aCompressedFileReadsItsRangesToo() throws IOException {
        fixture.conf.set(SealedFileSystem.COMPRESS, "snappy");
        try (FileSystem compressed = fixture.sealed()) {
            byte[] plain = new byte[300_000];
            for (int i = 0; i < plain.length; i++) {
                plain[i] = (byte) (i / 1000);
            }
            Path path = fixture.sealedPath("c");
            write(compressed, path, plain);
            try (FSDataInputStream in = compressed.open(path)) {
                FileRange a = FileRange.createFileRange(70_000, 100_000);
                FileRange b = FileRange.createFileRange(10, 10);
                in.readVectored(List.of(a, b), allocator(false));
                assertArrayEquals(Arrays.copyOfRange(plain, 70_000, 170_000), bytes(a));
                assertArrayEquals(Arrays.copyOfRange(plain, 10, 20), bytes(b));
            }
        }
    }

    @Test
    void openFileTakesTheLengthFromTheCallersStatusOrOption() throws Exception {
        byte[] plain = data(2 * CHUNK + 77, 16);
        Path path = fixture.sealedPath("o");
        write(fs, path, plain);
        FileStatus status = fs.getFileStatus(path);
        try (FSDataInputStream in = FutureIO.awaitFuture(fs.openFile(path).withFileStatus(status)
                .opt(OpenFileOptions.FS_OPTION_OPENFILE_READ_POLICY, OpenFileOptions.FS_OPTION_OPENFILE_READ_POLICY_RANDOM)
                .build())) {
            assertArrayEquals(plain, in.readAllBytes());
        }
        try (FSDataInputStream in = FutureIO.awaitFuture(fs.openFile(path)
                .opt(OpenFileOptions.FS_OPTION_OPENFILE_LENGTH, plain.length).build())) {
            assertArrayEquals(plain, in.readAllBytes());
        }
        // A wrong length never reads as another file: the end it implies does not authenticate.
        try (FSDataInputStream in = FutureIO.awaitFuture(fs.openFile(path)
                .opt(OpenFileOptions.FS_OPTION_OPENFILE_LENGTH, plain.length - 1).build())) {
            assertThrows(StreamAuthenticationException.class, in::readAllBytes);
        }
        // The wrapped file system checks the options it is given as mandatory.
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> FutureIO.awaitFuture(fs.openFile(path)
                .must("fs.sealpipe.test.unknown", "1").build()));
        assertTrue(unknown.getMessage().contains("fs.sealpipe.test.unknown"), unknown.getMessage());
        assertThrows(java.io.FileNotFoundException.class, () -> FutureIO.awaitFuture(fs.openFile(path.getParent())
                .withFileStatus(fs.getFileStatus(path.getParent())).build()));
    }

    @Test
    void longRangesLieAcrossSeveralSpansAndEachChunkStillOpensOnce() throws IOException {
        byte[] plain = data(12 << 20, 17);
        Path path = fixture.sealedPath("long");
        write(fs, path, plain);
        List<FileRange> ranges = new ArrayList<>();
        for (int at = 7; at + 1_000_000 <= plain.length; at += 1_000_000) {
            ranges.add(FileRange.createFileRange(at, 1_000_000)); // unaligned, back to back: one run of chunks
        }
        ranges.add(FileRange.createFileRange(12_000_100, 3 << 20 < plain.length - 12_000_100 ? 3 << 20 : plain.length - 12_000_100));
        org.apache.hadoop.fs.FileSystem.Statistics stats = org.apache.hadoop.fs.FileSystem.getStatistics("sfile", SealedFileSystem.class);
        long readBefore = stats.getThreadStatistics().getBytesRead();
        long requested = 0;
        for (FileRange r : ranges) {
            requested += r.getLength();
        }
        try (FSDataInputStream in = fs.open(path)) {
            long before = chunksOpened(in);
            in.readVectored(ranges, allocator(true));
            long chunks = 0;
            long lastChunk = -1;
            for (FileRange r : ranges) {
                assertArrayEquals(Arrays.copyOfRange(plain, (int) r.getOffset(), (int) r.getOffset() + r.getLength()), bytes(r),
                        "range at " + r.getOffset());
                long first = Math.max(r.getOffset() / CHUNK, lastChunk + 1);
                long last = (r.getOffset() + r.getLength() - 1) / CHUNK;
                chunks += last - first + 1;
                lastChunk = last;
            }
            assertEquals(chunks, chunksOpened(in) - before, "each chunk once, shared ones too");
            assertEquals(requested, stats.getThreadStatistics().getBytesRead() - readBefore,
                    "the bytes are counted in the caller's thread (Spark's task metrics read its counts)");
        }
    }

    @Test
    void aTamperedChunkFailsARangeThatSpansMany() throws IOException {
        byte[] plain = data(300 * CHUNK, 18);
        Path path = fixture.sealedPath("span");
        write(fs, path, plain);
        byte[] stored = Files.readAllBytes(dir.resolve("span"));
        stored[GcmStreams.HEADER_LENGTH + 150 * (CHUNK + 16) + 9] ^= 1; // chunk 150, in the third span of the long range
        try (FSDataOutputStream out = fixture.local().create(fixture.storedPath("span"), true)) {
            out.write(stored);
        }
        FileRange longRange = FileRange.createFileRange(10, 200 * CHUNK);
        FileRange after = FileRange.createFileRange(250 * CHUNK, 1000);
        try (FSDataInputStream in = fs.open(path)) {
            in.readVectored(List.of(longRange, after), allocator(false));
            StreamAuthenticationException e = assertInstanceOf(StreamAuthenticationException.class,
                    assertThrows(ExecutionException.class, () -> longRange.getData().get()).getCause());
            assertEquals(150, e.chunk());
            assertArrayEquals(Arrays.copyOfRange(plain, 250 * CHUNK, 250 * CHUNK + 1000), bytes(after));
        }
    }

    @Test
    void anEmptyRangeNeedsNoReadAndAStatusOfAnotherFileIsRefused() throws Exception {
        byte[] plain = data(3 * CHUNK, 19);
        Path path = fixture.sealedPath("x");
        Path other = fixture.sealedPath("y");
        write(fs, path, plain);
        write(fs, other, plain);
        // Cut after two whole chunks: an empty range in them is empty, not a failure.
        byte[] stored = Files.readAllBytes(dir.resolve("x"));
        try (FSDataOutputStream out = fixture.local().create(fixture.storedPath("x"), true)) {
            out.write(Arrays.copyOf(stored, GcmStreams.HEADER_LENGTH + 2 * (CHUNK + 16)));
        }
        try (FSDataInputStream in = fs.open(path)) {
            FileRange empty = FileRange.createFileRange(CHUNK, 0);
            in.readVectored(List.of(empty), allocator(false));
            assertEquals(0, bytes(empty).length);
        }
        FileStatus otherStatus = fs.getFileStatus(other);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> fs.openFile(path).withFileStatus(otherStatus).build());
        assertTrue(e.getMessage().contains("another file"), e.getMessage());
    }
}
