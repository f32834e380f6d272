package io.sealpipe.ctr;

import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.CtrFixtures.key;
import static io.sealpipe.CtrFixtures.referenceCtr;
import static io.sealpipe.CtrFixtures.report;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.CtrFixtures;
import io.sealpipe.CtrFixtures.MemoryChannel;
import io.sealpipe.PositionedInput;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Seeking and positioned reads over a seekable channel: a FileChannel on a temp file and an
 * in-memory SeekableByteChannel. The ciphertext comes from the reference CTR in
 * {@link CtrFixtures}, behind a 77-byte prefix the stream never sees: the channel is at 77 when
 * wrapped, which holds stream position {@code streamOffset}. Random operations with fixed seeds
 * are compared against the plaintext, every failure collected, then reported together. The same
 * over a {@link PositionedInput} (a FileChannel's positioned reads, and a Hadoop
 * FSDataInputStream on the local file system), reading a file of the ciphertext alone: its
 * position 0 holds {@code streamOffset}.
 */
class CtrSeekTest {
    private static final int PREFIX = 77;
    private static final int BUFFER = 512; // the smallest: most buffer edges per byte
    private static final int SIZE = 20_011;

    /**
     * Where the ciphertext is: seekable channels, ByteBuffers (decrypted straight from the
     * buffer), including the read-only kinds a mapped file or a network block gives, and
     * PositionedInputs.
     */
    enum ChannelKind {
        FILE, MEMORY, HEAP_BUFFER, READ_ONLY_HEAP_BUFFER, DIRECT_BUFFER, MAPPED_FILE, POSITIONED_FILE, HADOOP_LOCAL_FS
    }

    @TempDir
    Path dir;

    /** What the PositionedInputs read from: the streams over them leave it open. */
    private final List<Closeable> inputs = new ArrayList<>();

    @AfterEach
    void closeInputs() throws IOException {
        for (Closeable c : inputs) {
            c.close();
        }
    }

    /** An FSDataInputStream of Hadoop's local file system over {@code path}, closed after the test. */
    private FSDataInputStream openWithHadoop(Path path) throws IOException {
        // The raw local file system itself, not FileSystem.getLocal: its cache asks Hadoop's
        // UserGroupInformation for the current user, which uses Subject.getSubject, unsupported
        // from Java 23 on (HADOOP-19212).
        RawLocalFileSystem fs = new RawLocalFileSystem();
        fs.initialize(URI.create("file:///"), new Configuration());
        FSDataInputStream in = fs.open(new org.apache.hadoop.fs.Path(path.toUri()));
        inputs.add(in);
        return in;
    }

    static Stream<Arguments> cases() {
        return TestEngines.ctrKinds().flatMap(kind -> Stream.of(ChannelKind.values())
                .flatMap(ch -> Stream.of(0L, 12345L).map(offset -> Arguments.of(kind, ch, offset))));
    }

    static Stream<Arguments> channelCases() {
        return TestEngines.ctrKinds().flatMap(kind -> Stream.of(ChannelKind.values()).map(ch -> Arguments.of(kind, ch)));
    }

    /** A stream over {@code channel} positioned at PREFIX; the plaintext and layout in one place. */
    private final class Fixture {
        final byte[] key = key(24);
        final byte[] iv = CtrFixtures.ivs().get("low32-fffffffe");
        final byte[] plain;
        final long offset;
        final long end;
        final CtrStreams ctr;
        final SeekableByteChannel channel; // null for the ByteBuffer kinds
        final ByteBuffer buffer;           // null for the channel kinds
        PositionedInput positioned;        // for the PositionedInput kinds only

        Fixture(EngineKind kind, ChannelKind channelKind, long offset, int bufferSize) throws IOException {
            this.offset = offset;
            this.plain = bytes(offset + 31, SIZE);
            this.end = offset + SIZE;
            this.ctr = CtrFixtures.builder(kind, key, iv).bufferSize(bufferSize).streamOffset(offset).build();
            byte[] file = new byte[PREFIX + SIZE];
            Arrays.fill(file, 0, PREFIX, (byte) 0xa5);
            System.arraycopy(referenceCtr(key, iv, offset, plain), 0, file, PREFIX, SIZE);
            Path path = Files.createTempFile(dir, "ctr", ".bin");
            Files.write(path, file);
            Path cipherOnly = Files.write(dir.resolve(path.getFileName() + ".cipher"),
                    Arrays.copyOfRange(file, PREFIX, file.length));
            switch (channelKind) {
                case FILE -> {
                    channel = FileChannel.open(path, StandardOpenOption.READ);
                    buffer = null;
                }
                case MEMORY -> {
                    channel = new MemoryChannel(file, true);
                    buffer = null;
                }
                case HEAP_BUFFER -> {
                    channel = null;
                    buffer = ByteBuffer.wrap(file);
                }
                case READ_ONLY_HEAP_BUFFER -> {
                    channel = null;
                    buffer = ByteBuffer.wrap(file).asReadOnlyBuffer();
                }
                case DIRECT_BUFFER -> {
                    channel = null;
                    buffer = ByteBuffer.allocateDirect(file.length).put(file).flip();
                }
                case MAPPED_FILE -> {
                    channel = null;
                    try (FileChannel fc = FileChannel.open(path, StandardOpenOption.READ)) {
                        buffer = fc.map(FileChannel.MapMode.READ_ONLY, 0, file.length);
                    }
                }
                case POSITIONED_FILE -> {
                    channel = null;
                    buffer = null;
                    FileChannel fc = FileChannel.open(cipherOnly, StandardOpenOption.READ);
                    inputs.add(fc);
                    positioned = (position, b, off, len) -> fc.read(ByteBuffer.wrap(b, off, len), position);
                }
                default -> {
                    channel = null;
                    buffer = null;
                    positioned = openWithHadoop(cipherOnly)::read;
                }
            }
            if (channel != null) {
                channel.position(PREFIX);
            } else if (buffer != null) {
                buffer.position(PREFIX);
            }
        }

        /** The decrypting stream over this fixture's channel, buffer or positioned input. */
        CryptoInputStream open() {
            return channel != null ? ctr.decrypt(channel) : buffer != null ? ctr.decrypt(buffer) : ctr.decrypt(positioned);
        }

        /** Plaintext at stream positions [from, from + n). */
        byte[] expected(long from, int n) {
            int i = (int) (from - offset);
            return Arrays.copyOfRange(plain, i, i + n);
        }
    }

    @ParameterizedTest(name = "{0}, {1}, streamOffset {2}")
    @MethodSource("cases")
    void randomSeeksReadsSkipsAndPositionedReadsMatchThePlaintext(EngineKind kind, ChannelKind channelKind, long offset)
            throws IOException {
        Fixture f = new Fixture(kind, channelKind, offset, BUFFER);
        Random random = new Random(4242 + offset + channelKind.ordinal());
        List<String> failures = new ArrayList<>();
        long model = offset; // where the stream should be
        try (CryptoInputStream in = f.open()) {
            assertTrue(in.isSeekable());
            for (int op = 0; op < 3000 && failures.size() < 50; op++) {
                String where = "op " + op + " at " + model;
                switch (random.nextInt(9)) {
                    case 0 -> { // seek anywhere, including the end and past it
                        long to = f.offset + random.nextInt(SIZE + 40);
                        in.seek(to);
                        model = to;
                    }
                    case 1 -> { // seek near here, backwards or forwards: inside or just outside the buffer
                        long to = Math.max(f.offset, model + random.nextInt(4 * BUFFER) - 2 * BUFFER);
                        in.seek(to);
                        model = to;
                    }
                    case 2, 3 -> { // read(byte[]) at an offset, small (buffered) or large (direct)
                        int len = random.nextBoolean() ? random.nextInt(BUFFER / 2) : BUFFER / 2 + random.nextInt(3 * BUFFER);
                        byte[] b = new byte[len + 5];
                        int n = in.read(b, 5, len);
                        model = checkRead(failures, where + " read(" + len + ")", f, model, len, n,
                                n > 0 ? Arrays.copyOfRange(b, 5, 5 + n) : null);
                    }
                    case 4 -> {
                        int b = in.read();
                        model = checkRead(failures, where + " read()", f, model, 1, b < 0 ? -1 : 1,
                                b < 0 ? null : new byte[] {(byte) b});
                    }
                    case 5 -> { // read(ByteBuffer), direct or heap
                        int len = 1 + random.nextInt(2 * BUFFER);
                        ByteBuffer dst = random.nextBoolean() ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
                        int n = in.read(dst);
                        byte[] got = new byte[Math.max(n, 0)];
                        dst.flip().get(got);
                        model = checkRead(failures, where + " read(ByteBuffer " + len + ")", f, model, len, n,
                                n > 0 ? got : null);
                    }
                    case 6 -> {
                        long n = random.nextInt(3 * BUFFER);
                        long skipped = in.skip(n);
                        long max = Math.max(0, Math.min(n, f.end - model));
                        if (skipped < 0 || skipped > max) {
                            failures.add(where + " skip(" + n + ") returned " + skipped + ", at most " + max);
                        }
                        model += skipped;
                    }
                    case 7 -> { // positioned read: right bytes, stream position unchanged
                        long at = f.offset + random.nextInt(SIZE + 10);
                        int len = random.nextInt(3 * BUFFER);
                        byte[] b = new byte[len];
                        int n = in.read(at, b, 0, len);
                        int expectedLength = (int) Math.min(len, Math.max(0, f.end - at));
                        if (len == 0 ? n != 0 : expectedLength == 0 ? n != -1 : n < 1 || n > expectedLength) {
                            failures.add(where + " read(" + at + ", " + len + ") returned " + n);
                        } else if (n > 0) {
                            CtrFixtures.check(failures, where + " read(" + at + ", " + len + ")",
                                    f.expected(at, n), Arrays.copyOf(b, n));
                        }
                    }
                    default -> {
                        long at = f.offset + random.nextInt(SIZE);
                        int len = (int) Math.min(random.nextInt(3 * BUFFER), f.end - at);
                        byte[] b = new byte[len];
                        in.readFully(at, b);
                        CtrFixtures.check(failures, where + " readFully(" + at + ", " + len + ")", f.expected(at, len), b);
                    }
                }
                if (in.getPos() != model) {
                    failures.add("after op " + op + ": getPos() " + in.getPos() + ", expected " + model);
                    model = in.getPos();
                }
                long available = in.available();
                // A PositionedInput has no size: only the bytes decrypted ahead are known to be there.
                if (f.positioned == null ? available != Math.max(0, f.end - model)
                        : available < 0 || available > Math.max(0, f.end - model)) {
                    failures.add("after op " + op + ": available() " + available + " at " + model + ", expected "
                            + Math.max(0, f.end - model));
                }
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    /** Checks a sequential read of up to {@code len} at {@code model} that returned n; returns the new model position. */
    private static long checkRead(List<String> failures, String where, Fixture f, long model, int len, int n, byte[] got) {
        long left = Math.max(0, f.end - model);
        if (len == 0) {
            if (n != 0) {
                failures.add(where + ": returned " + n + " for length 0");
            }
            return model;
        }
        if (left == 0) {
            if (n != -1) {
                failures.add(where + ": returned " + n + " at the end, expected -1");
            }
            return model;
        }
        if (n < 1 || n > Math.min(len, left)) {
            failures.add(where + ": returned " + n + " with " + left + " left");
            return model + Math.max(n, 0);
        }
        CtrFixtures.check(failures, where, f.expected(model, n), got);
        return model + n;
    }

    /**
     * A large read goes straight into the caller's array and leaves the stream's own buffer
     * holding older plaintext; a seek back into the range it reads must not serve that.
     */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("channelCases")
    void seekBackAfterALargeReadReturnsTheBytesAtTheNewPosition(EngineKind kind, ChannelKind channelKind)
            throws IOException {
        Fixture f = new Fixture(kind, channelKind, 0, BUFFER);
        try (CryptoInputStream in = f.open()) {
            byte[] small = new byte[100];
            assertEquals(100, in.read(small));                  // fills the buffer: stream 0..512
            assertEquals(412, in.readNBytes(new byte[412], 0, 412)); // buffer used up
            byte[] large = new byte[1000];
            assertEquals(1000, in.read(large, 0, 1000));        // direct: stream 512..1512
            assertEquals(1512, in.getPos());
            in.seek(1100);
            byte[] got = in.readNBytes(100);
            assertArrayEquals(f.expected(1100, 100), got,
                    "bytes after seek(1100) following a direct read of 512..1512");
        }
    }

    /** skip() past the buffer leaves it holding older plaintext; a seek back must not serve that. */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("channelCases")
    void seekBackAfterSkippingPastTheBufferReturnsTheBytesAtTheNewPosition(EngineKind kind, ChannelKind channelKind)
            throws IOException {
        Fixture f = new Fixture(kind, channelKind, 0, BUFFER);
        try (CryptoInputStream in = f.open()) {
            assertEquals(0, in.read() - (f.plain[0] & 0xff)); // fills the buffer: stream 0..512
            assertEquals(2999, in.skip(2999));                 // to 3000, past the buffer
            assertEquals(3000, in.getPos());
            in.seek(2900);
            assertArrayEquals(f.expected(2900, 50), in.readNBytes(50), "bytes after skip(2999) then seek(2900)");
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("channelCases")
    void positionedReadsDoNotMoveTheStream(EngineKind kind, ChannelKind channelKind) throws IOException {
        Fixture f = new Fixture(kind, channelKind, 12345, BUFFER);
        try (CryptoInputStream in = f.open()) {
            assertArrayEquals(f.expected(12345, 700), in.readNBytes(700));
            byte[] b = new byte[3000];
            int done = 0;
            while (done < b.length) { // read(long, ...) may return fewer bytes than asked
                int n = in.read(12345 + 5000 + done, b, done, b.length - done);
                assertTrue(n > 0, "positioned read returned " + n + " after " + done + " bytes");
                done += n;
            }
            assertArrayEquals(f.expected(12345 + 5000, 3000), b);
            in.readFully(12345 + 3, b, 0, 10);
            assertArrayEquals(f.expected(12345 + 3, 10), Arrays.copyOf(b, 10));
            assertEquals(12345 + 700, in.getPos());
            // The sequential stream carries on where it was, across its buffer edge.
            assertArrayEquals(f.expected(12345 + 700, 2000), in.readNBytes(2000));
            assertEquals(12345 + 2700, in.getPos());
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("channelCases")
    void readFullyAndReadAtAndPastTheEnd(EngineKind kind, ChannelKind channelKind) throws IOException {
        Fixture f = new Fixture(kind, channelKind, 12345, BUFFER);
        try (CryptoInputStream in = f.open()) {
            byte[] b = new byte[20];
            in.readFully(f.end - 10, b, 5, 10);
            assertArrayEquals(f.expected(f.end - 10, 10), Arrays.copyOfRange(b, 5, 15));
            EOFException e = assertThrows(EOFException.class, () -> in.readFully(f.end - 10, b, 0, 11));
            assertTrue(e.getMessage().contains(Long.toString(f.end + 1)), e.getMessage());
            assertThrows(EOFException.class, () -> in.readFully(f.end, b, 0, 1));
            assertThrows(EOFException.class, () -> in.readFully(f.end + 100, b));
            in.readFully(f.end, b, 0, 0); // nothing to read is not an error
            assertEquals(-1, in.read(f.end, b, 0, 5));
            assertEquals(-1, in.read(f.end + 1000, b, 0, 5));
            assertEquals(0, in.read(f.end + 1000, b, 0, 0));
            assertEquals(f.offset, in.getPos());
            // Seek to and past the end: reads say -1.
            in.seek(f.end);
            assertEquals(-1, in.read());
            in.seek(f.end + 5);
            assertEquals(-1, in.read(b, 0, 5));
            assertEquals(f.end + 5, in.getPos());
            in.seek(f.end - 1);
            assertEquals(f.plain[SIZE - 1] & 0xff, in.read());
            assertEquals(-1, in.read());
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("channelCases")
    void positionsBeforeTheStreamOffsetAreRejectedNamingBoth(EngineKind kind, ChannelKind channelKind) throws IOException {
        Fixture f = new Fixture(kind, channelKind, 12345, BUFFER);
        try (CryptoInputStream in = f.open()) {
            IllegalArgumentException seek = assertThrows(IllegalArgumentException.class, () -> in.seek(12344));
            assertTrue(seek.getMessage().contains("12344") && seek.getMessage().contains("12345"), seek.getMessage());
            IllegalArgumentException read = assertThrows(IllegalArgumentException.class,
                    () -> in.read(100, new byte[4], 0, 4));
            assertTrue(read.getMessage().contains("100") && read.getMessage().contains("12345"), read.getMessage());
            assertThrows(IllegalArgumentException.class, () -> in.readFully(0, new byte[4]));
            assertEquals(12345, in.getPos());
            assertArrayEquals(f.expected(12345, 33), in.readNBytes(33));
        }
    }

    /**
     * 4 threads × 500 positioned reads at random places, while the main thread reads the whole
     * stream sequentially: every byte right, the sequential position undisturbed.
     */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("channelCases")
    void concurrentPositionedReadsAreAllCorrect(EngineKind kind, ChannelKind channelKind) throws Exception {
        Fixture f = new Fixture(kind, channelKind, 12345, BUFFER);
        Queue<String> failures = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (CryptoInputStream in = f.open()) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long seed = 900 + t;
                futures.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    start.await();
                    for (int i = 0; i < 500; i++) {
                        long at = f.offset + random.nextInt(SIZE);
                        int len = (int) Math.min(1 + random.nextInt(2000), f.end - at);
                        byte[] b = new byte[len + 7];
                        in.readFully(at, b, 7, len);
                        if (!Arrays.equals(f.expected(at, len), Arrays.copyOfRange(b, 7, 7 + len))) {
                            failures.add("thread seed " + seed + " read " + i + " at " + at + " length " + len);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            byte[] sequential = in.readAllBytes(); // concurrently with the positioned reads
            for (Future<?> future : futures) {
                future.get(30, TimeUnit.SECONDS);
            }
            if (!Arrays.equals(f.plain, sequential)) {
                failures.add("sequential read alongside: " + CtrFixtures.describeMismatch(f.plain, sequential));
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(failures.isEmpty(), report(new ArrayList<>(failures)));
    }

    /** Wrapping at a non-zero channel position with an unaligned offset: getPos, seek and reads line up. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void unalignedOffsetOnEveryBlockPhase(EngineKind kind) throws IOException {
        List<String> failures = new ArrayList<>();
        for (long offset = 1_000_000; offset < 1_000_000 + 17; offset++) {
            Fixture f = new Fixture(kind, ChannelKind.MEMORY, offset, BUFFER);
            try (CryptoInputStream in = f.open()) {
                CtrFixtures.check(failures, "offset " + offset + " first 40", f.expected(offset, 40), in.readNBytes(40));
                for (long to : new long[] {offset, offset + 1, offset + 15, offset + 16, offset + 600, f.end - 3}) {
                    in.seek(to);
                    int n = (int) Math.min(40, f.end - to);
                    CtrFixtures.check(failures, "offset " + offset + " seek " + to, f.expected(to, n), in.readNBytes(40));
                }
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    /**
     * What a Hadoop user writes: {@code ctr.decrypt(fsIn::read)} over an FSDataInputStream of the
     * local file system. Reads, seeks, positioned reads and the end come out right; the
     * FSDataInputStream's own position never moves, and it stays open after the stream closes.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void aHadoopFsDataInputStreamIsDecryptedThroughAMethodReference(EngineKind kind) throws IOException {
        byte[] key = key(32);
        byte[] iv = CtrFixtures.ivs().get("all-ff");
        byte[] plain = bytes(99, SIZE);
        Path file = Files.write(dir.resolve("hadoop.enc"), referenceCtr(key, iv, 0, plain));
        CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(BUFFER).build();
        FSDataInputStream fsIn = openWithHadoop(file);
        try (CryptoInputStream in = ctr.decrypt(fsIn::read)) {
            assertTrue(in.isSeekable());
            assertArrayEquals(Arrays.copyOf(plain, 1000), in.readNBytes(1000));
            in.seek(15_000);
            assertArrayEquals(Arrays.copyOfRange(plain, 15_000, 15_100), in.readNBytes(100));
            byte[] b = new byte[3000];
            in.readFully(7, b);
            assertArrayEquals(Arrays.copyOfRange(plain, 7, 3007), b);
            assertEquals(15_100, in.getPos());
            assertArrayEquals(Arrays.copyOfRange(plain, 15_100, SIZE), in.readAllBytes());
            assertEquals(-1, in.read());
            assertThrows(EOFException.class, () -> in.readFully(SIZE - 5, new byte[6]));
            assertEquals(-1, in.read(SIZE, b, 0, 5));
        }
        assertEquals(0, fsIn.getPos(), "the stream reads by position only");
        assertEquals(1, fsIn.read(0, new byte[1], 0, 1), "the FSDataInputStream is still open");

        // With a stream offset: the input's position 0 holds it. The cast form compiles too.
        byte[] tail = Arrays.copyOfRange(plain, 5000, SIZE);
        Files.write(file, referenceCtr(key, iv, 5000, tail));
        CtrStreams fromOffset = CtrFixtures.builder(kind, key, iv).bufferSize(BUFFER).streamOffset(5000).build();
        try (FSDataInputStream again = openWithHadoop(file);
                CryptoInputStream in = fromOffset.decrypt((PositionedInput) again::read)) {
            assertEquals(5000, in.getPos());
            assertArrayEquals(Arrays.copyOfRange(plain, 6000, 6010), readFully(in, 6000, 10));
            assertArrayEquals(tail, in.readAllBytes());
        }
    }

    private static byte[] readFully(CryptoInputStream in, long position, int n) throws IOException {
        byte[] b = new byte[n];
        in.readFully(position, b);
        return b;
    }

    @Test
    void aStreamOverAnInputStreamOrPlainChannelCannotSeek() throws IOException {
        byte[] key = key(16);
        byte[] iv = new byte[16];
        CtrStreams ctr = CtrStreams.builder().engine(EngineKind.JCE).key(key).iv(iv).build();
        byte[] cipher = referenceCtr(key, iv, 0, new byte[100]);
        for (CryptoInputStream in : List.of(
                ctr.decrypt(new ByteArrayInputStream(cipher)),
                ctr.decrypt(Channels.newChannel(new ByteArrayInputStream(cipher))))) {
            try (in) {
                assertFalse(in.isSeekable());
                UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> in.seek(5));
                // It names the calls that exist (there is no decrypt(SeekableByteChannel)).
                assertTrue(e.getMessage().contains("SeekableByteChannel") && e.getMessage().contains("decrypt(ReadableByteChannel)")
                        && e.getMessage().contains("decrypt(ByteBuffer)") && e.getMessage().contains("decrypt(PositionedInput)")
                        && !e.getMessage().contains("decrypt(SeekableByteChannel)"), e.getMessage());
                assertThrows(UnsupportedOperationException.class, () -> in.read(5, new byte[3], 0, 3));
                assertThrows(UnsupportedOperationException.class, () -> in.readFully(5, new byte[3]));
                assertArrayEquals(new byte[100], in.readAllBytes()); // still reads sequentially
            }
        }
    }
}
