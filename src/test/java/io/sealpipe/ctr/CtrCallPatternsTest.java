package io.sealpipe.ctr;

import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.CtrFixtures.check;
import static io.sealpipe.CtrFixtures.key;
import static io.sealpipe.CtrFixtures.referenceCtr;
import static io.sealpipe.CtrFixtures.report;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.CtrFixtures;
import io.sealpipe.CtrFixtures.FaultyOutputStream;
import io.sealpipe.CtrFixtures.MemoryChannel;
import io.sealpipe.CtrFixtures.OneByteAtATime;
import io.sealpipe.engine.EngineKind;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every way of writing and reading gives the one-shot bytes, on every engine: 1-byte calls,
 * array offsets, random splits, flushes between writes, heap/direct/read-only ByteBuffers,
 * channel forms, streams that return one byte at a time, skip and available. Then the lifecycle:
 * closeUnderlying(false), idempotent close, close and write failures of the wrapped stream.
 * Expected bytes come from the BigInteger reference in {@link CtrFixtures}.
 */
class CtrCallPatternsTest {
    /** Not a multiple of 16; writes and reads of 256+ bytes bypass the buffer. */
    private static final int BUFFER = 1000;
    private static final int[] SIZES = {0, 1, 15, 16, 17, 255, 256, 257, 999, 1000, 1001, 4095, 3 * BUFFER + 7, 70_001};
    private static final long[] OFFSETS = {0, 12345};

    interface Writer {
        void write(CryptoOutputStream out, byte[] plain, Random random) throws IOException;
    }

    interface Reader {
        byte[] read(CtrStreams ctr, byte[] cipher, Random random) throws IOException;
    }

    /** Write patterns by name; each writes all of plain and checks getPos as it goes. */
    static Map<String, Writer> writers() {
        Map<String, Writer> w = new LinkedHashMap<>();
        w.put("one write(byte[])", (out, plain, random) -> out.write(plain));
        w.put("write(int) each byte", (out, plain, random) -> {
            for (byte b : plain) {
                out.write(b);
            }
        });
        w.put("random splits at an array offset", (out, plain, random) -> {
            byte[] padded = pad(plain, 7);
            for (int done = 0; done < plain.length; ) {
                int n = Math.min(plain.length - done, piece(random));
                out.write(padded, 7 + done, n);
                done += n;
            }
        });
        for (int k : new int[] {1, 3, 7}) {
            w.put("random splits, flush every " + k, (out, plain, random) -> {
                int writes = 0;
                for (int done = 0; done < plain.length; ) {
                    int n = Math.min(plain.length - done, piece(random));
                    out.write(plain, done, n);
                    done += n;
                    if (++writes % k == 0) {
                        out.flush();
                    }
                }
                out.flush();
            });
        }
        w.put("heap ByteBuffer slices with an array offset", (out, plain, random) -> writeBuffers(out, plain, random,
                n -> ByteBuffer.wrap(new byte[n + 9], 9, n).slice(), false));
        w.put("direct ByteBuffers", (out, plain, random) -> writeBuffers(out, plain, random, ByteBuffer::allocateDirect, false));
        w.put("read-only heap ByteBuffers", (out, plain, random) -> {
            for (int done = 0; done < plain.length; ) {
                int n = Math.min(plain.length - done, piece(random));
                ByteBuffer src = ByteBuffer.wrap(plain, done, n).asReadOnlyBuffer();
                assertEquals(n, out.write(src));
                assertFalse(src.hasRemaining());
                done += n;
            }
        });
        w.put("read-only direct ByteBuffers", (out, plain, random) -> writeBuffers(out, plain, random,
                ByteBuffer::allocateDirect, true));
        return w;
    }

    interface BufferMaker {
        ByteBuffer make(int n);
    }

    private static void writeBuffers(CryptoOutputStream out, byte[] plain, Random random, BufferMaker maker,
            boolean readOnly) throws IOException {
        for (int done = 0; done < plain.length; ) {
            int n = Math.min(plain.length - done, piece(random));
            ByteBuffer src = maker.make(n);
            src.put(plain, done, n).flip();
            if (readOnly) {
                src = src.asReadOnlyBuffer();
            }
            assertEquals(n, out.write(src));
            assertFalse(src.hasRemaining(), "write(ByteBuffer) consumes the buffer");
            done += n;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void everyWritePatternGivesTheReferenceCiphertext(EngineKind kind) throws IOException {
        List<String> failures = new ArrayList<>();
        byte[] key = key(32);
        byte[] iv = CtrFixtures.ivs().get("low64-ff");
        for (long offset : OFFSETS) {
            // A fresh instance per stream: each encrypts one stream (the same key and IV, on purpose).
            CtrStreams.Builder ctr = CtrFixtures.builder(kind, key, iv).bufferSize(BUFFER).streamOffset(offset);
            for (int size : SIZES) {
                byte[] plain = bytes(size * 31L + offset, size);
                byte[] untouched = plain.clone();
                byte[] expected = referenceCtr(key, iv, offset, plain);
                int patternNo = 0;
                for (Map.Entry<String, Writer> pattern : writers().entrySet()) {
                    String where = kind + " offset " + offset + " size " + size + " " + pattern.getKey();
                    Random random = new Random(size * 7919L + patternNo++);
                    // Through an OutputStream, and through a plain WritableByteChannel.
                    ByteArrayOutputStream sink = new ByteArrayOutputStream();
                    try (CryptoOutputStream out = ctr.build().encrypt(sink)) {
                        pattern.getValue().write(out, plain, random);
                        if (out.getPos() != offset + size) {
                            failures.add(where + ": getPos " + out.getPos() + ", expected " + (offset + size));
                        }
                    }
                    check(failures, where + " (OutputStream)", expected, sink.toByteArray());
                    ByteArrayOutputStream channelSink = new ByteArrayOutputStream();
                    try (CryptoOutputStream out = ctr.build().encrypt(new TrickleChannel(channelSink, 100))) {
                        pattern.getValue().write(out, plain, random);
                    }
                    check(failures, where + " (channel taking 100 bytes a write)", expected, channelSink.toByteArray());
                    if (!Arrays.equals(untouched, plain)) {
                        failures.add(where + ": the caller's plaintext array was modified");
                        plain = untouched.clone();
                    }
                }
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    /** Each flush passes on everything written so far: the wrapped stream then holds getPos - offset bytes. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void flushPassesOnEverythingWrittenSoFar(EngineKind kind) throws IOException {
        byte[] key = key(16);
        byte[] iv = CtrFixtures.ivs().get("all-ff");
        byte[] plain = bytes(5, 9000);
        byte[] expected = referenceCtr(key, iv, 12345, plain);
        CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(BUFFER).streamOffset(12345).build();
        Random random = new Random(77);
        FaultyOutputStream sink = new FaultyOutputStream();
        List<String> failures = new ArrayList<>();
        try (CryptoOutputStream out = ctr.encrypt(sink)) {
            for (int done = 0; done < plain.length; ) {
                int n = Math.min(plain.length - done, piece(random));
                out.write(plain, done, n);
                done += n;
                out.flush();
                if (sink.written.size() != done) {
                    failures.add("after flush at " + done + " the wrapped stream has " + sink.written.size() + " bytes");
                }
                if (out.getPos() != 12345 + done) {
                    failures.add("getPos " + out.getPos() + " after " + done + " bytes");
                }
            }
        }
        check(failures, "ciphertext", expected, sink.written.toByteArray());
        assertTrue(sink.flushCalls > 0);
        assertTrue(failures.isEmpty(), report(failures));
    }

    /** Read patterns by name; each returns everything read up to the end. */
    static Map<String, Reader> readers() {
        Map<String, Reader> r = new LinkedHashMap<>();
        r.put("readAllBytes", (ctr, cipher, random) -> {
            try (CryptoInputStream in = ctr.decrypt(new ByteArrayInputStream(cipher))) {
                return in.readAllBytes();
            }
        });
        r.put("read() each byte", (ctr, cipher, random) -> {
            try (CryptoInputStream in = ctr.decrypt(new ByteArrayInputStream(cipher))) {
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                for (int b; (b = in.read()) >= 0; ) {
                    got.write(b);
                }
                return got.toByteArray();
            }
        });
        r.put("random lengths at an array offset", (ctr, cipher, random) -> {
            try (CryptoInputStream in = ctr.decrypt(new ByteArrayInputStream(cipher))) {
                return readRandomly(in, random);
            }
        });
        r.put("random lengths from a stream giving one byte a call", (ctr, cipher, random) -> {
            try (CryptoInputStream in = ctr.decrypt(new OneByteAtATime(new ByteArrayInputStream(cipher)))) {
                return readRandomly(in, random);
            }
        });
        r.put("heap ByteBuffer slices", (ctr, cipher, random) -> readBuffers(ctr, cipher, random, false));
        r.put("direct ByteBuffers", (ctr, cipher, random) -> readBuffers(ctr, cipher, random, true));
        r.put("random lengths from a non-seekable channel", (ctr, cipher, random) -> {
            try (CryptoInputStream in = ctr.decrypt(Channels.newChannel(new ByteArrayInputStream(cipher)))) {
                return readRandomly(in, random);
            }
        });
        r.put("random lengths from a direct ByteBuffer", (ctr, cipher, random) -> {
            ByteBuffer data = ByteBuffer.allocateDirect(cipher.length).put(cipher).flip();
            try (CryptoInputStream in = ctr.decrypt(data)) {
                byte[] got = readRandomly(in, random);
                assertEquals(0, data.position(), "the caller's buffer keeps its position");
                assertEquals(cipher.length, data.limit(), "the caller's buffer keeps its limit");
                return got;
            }
        });
        r.put("read() each byte from a read-only heap ByteBuffer", (ctr, cipher, random) -> {
            try (CryptoInputStream in = ctr.decrypt(ByteBuffer.wrap(cipher).asReadOnlyBuffer())) {
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                for (int b; (b = in.read()) >= 0; ) {
                    got.write(b);
                }
                return got.toByteArray();
            }
        });
        r.put("random lengths from a channel giving 7 bytes a call", (ctr, cipher, random) -> {
            try (CryptoInputStream in = ctr.decrypt(new ShortReadChannel(cipher, 7))) {
                return readRandomly(in, random);
            }
        });
        return r;
    }

    private static byte[] readRandomly(CryptoInputStream in, Random random) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] b = new byte[80_000];
        long start = in.getPos();
        while (true) {
            int len = piece(random);
            int n = in.read(b, 11, len);
            if (n < 0) {
                break;
            }
            assertTrue(n > 0 && n <= len, "read(" + len + ") returned " + n);
            got.write(b, 11, n);
            assertEquals(start + got.size(), in.getPos());
        }
        return got.toByteArray();
    }

    private static byte[] readBuffers(CtrStreams ctr, byte[] cipher, Random random, boolean direct) throws IOException {
        try (CryptoInputStream in = ctr.decrypt(new ByteArrayInputStream(cipher))) {
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            while (true) {
                int len = piece(random);
                ByteBuffer dst = direct ? ByteBuffer.allocateDirect(len) : ByteBuffer.wrap(new byte[len + 5], 5, len).slice();
                int n = in.read(dst);
                if (n < 0) {
                    break;
                }
                assertEquals(n, dst.position());
                byte[] piece = new byte[n];
                dst.flip().get(piece);
                got.write(piece);
            }
            return got.toByteArray();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void everyReadPatternGivesThePlaintext(EngineKind kind) throws IOException {
        List<String> failures = new ArrayList<>();
        byte[] key = key(24);
        byte[] iv = CtrFixtures.ivs().get("low32-fffffffe");
        for (long offset : OFFSETS) {
            CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(BUFFER).streamOffset(offset).build();
            for (int size : SIZES) {
                byte[] plain = bytes(size * 17L + offset, size);
                byte[] cipher = referenceCtr(key, iv, offset, plain);
                int patternNo = 0;
                for (Map.Entry<String, Reader> pattern : readers().entrySet()) {
                    Random random = new Random(size * 104729L + patternNo++);
                    check(failures, kind + " offset " + offset + " size " + size + " " + pattern.getKey(),
                            plain, pattern.getValue().read(ctr, cipher, random));
                }
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    /** skip() mixed with reads over an InputStream and a plain channel; available() never overstates. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void skipAndAvailableKeepTheStreamInStep(EngineKind kind) throws IOException {
        List<String> failures = new ArrayList<>();
        byte[] key = key(16);
        byte[] iv = CtrFixtures.ivs().get("all-ff");
        long offset = 12345;
        byte[] plain = bytes(3, 30_000);
        byte[] cipher = referenceCtr(key, iv, offset, plain);
        CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(BUFFER).streamOffset(offset).build();
        for (String source : List.of("InputStream", "one-byte InputStream", "channel")) {
            Random random = new Random(source.hashCode());
            InputStream raw = new ByteArrayInputStream(cipher);
            try (CryptoInputStream in = switch (source) {
                case "InputStream" -> ctr.decrypt(raw);
                case "one-byte InputStream" -> ctr.decrypt(new OneByteAtATime(raw));
                default -> ctr.decrypt(Channels.newChannel(raw));
            }) {
                int at = 0; // index into plain
                for (int op = 0; op < 400 && failures.size() < 50; op++) {
                    String where = source + " op " + op + " at " + at;
                    int available = in.available();
                    if (available < 0 || available > plain.length - at) {
                        failures.add(where + ": available() " + available + " with " + (plain.length - at) + " left");
                    }
                    if (source.equals("InputStream") && available != plain.length - at) {
                        // A ByteArrayInputStream knows exactly what is left.
                        failures.add(where + ": available() " + available + ", expected " + (plain.length - at));
                    }
                    if (random.nextBoolean()) {
                        long n = random.nextInt(3) == 0 ? -random.nextInt(5) : random.nextInt(2 * BUFFER);
                        long skipped = in.skip(n);
                        if (skipped < 0 || skipped > Math.max(0, Math.min(n, plain.length - at))) {
                            failures.add(where + ": skip(" + n + ") returned " + skipped);
                            break;
                        }
                        at += (int) skipped;
                    } else {
                        int len = 1 + random.nextInt(BUFFER);
                        byte[] got = in.readNBytes(len);
                        int expectedLength = Math.min(len, plain.length - at);
                        check(failures, where + " read " + len, Arrays.copyOfRange(plain, at, at + expectedLength), got);
                        at += got.length;
                    }
                    if (in.getPos() != offset + at) {
                        failures.add(where + ": getPos " + in.getPos() + ", expected " + (offset + at));
                        break;
                    }
                }
                check(failures, source + " rest", Arrays.copyOfRange(plain, at, plain.length), in.readAllBytes());
                if (in.skip(10) != 0 || in.available() != 0 || in.read() != -1) {
                    failures.add(source + ": at the end skip/available/read should give 0/0/-1");
                }
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    // ---------------------------------------------------------------- lifecycle

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void closeUnderlyingFalseLeavesTheWrappedStreamOpenAndFlushed(EngineKind kind) throws IOException {
        byte[] key = key(16);
        byte[] iv = new byte[16];
        byte[] plain = bytes(8, 777);
        CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(BUFFER).closeUnderlying(false).build();

        ByteArrayOutputStream target = new ByteArrayOutputStream();
        BufferedOutputStream buffered = new BufferedOutputStream(target, 64 * 1024);
        FaultyOutputStream recorder = new FaultyOutputStream();
        CryptoOutputStream out = ctr.encrypt(buffered);
        CryptoOutputStream out2 = ctr.withIv(bytes(9, 16)).encrypt(recorder);
        out.write(plain, 0, 100);
        out.write(plain, 100, 677);
        out2.write(plain);
        out.close();
        out2.close();
        assertFalse(out.isOpen());
        // The BufferedOutputStream was flushed (its bytes reached the target) and is still usable.
        assertArrayEquals(referenceCtr(key, iv, 0, plain), target.toByteArray());
        buffered.write(42);
        buffered.flush();
        assertEquals(778, target.size());
        assertEquals(0, recorder.closeCalls);
        assertTrue(recorder.flushCalls >= 1, "flushed on close");
        assertThrows(ClosedChannelException.class, () -> out.write(1));

        WritableByteChannel channel = new TrickleChannel(new ByteArrayOutputStream(), 1 << 20);
        ctr.withIv(bytes(10, 16)).encrypt(channel).close();
        assertTrue(channel.isOpen());

        MemoryChannel source = new MemoryChannel(referenceCtr(key, iv, 0, plain));
        CryptoInputStream in = ctr.decrypt(source);
        assertArrayEquals(Arrays.copyOf(plain, 10), in.readNBytes(10));
        in.close();
        assertTrue(source.isOpen());
        assertEquals(0, source.closeCount);
        assertFalse(in.isOpen());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void closeIsIdempotentAndClosesTheWrappedStreamOnce(EngineKind kind) throws IOException {
        CtrStreams ctr = CtrFixtures.builder(kind, key(16), new byte[16]).bufferSize(BUFFER).build();
        FaultyOutputStream sink = new FaultyOutputStream();
        CryptoOutputStream out = ctr.encrypt(sink);
        out.write(new byte[10]);
        out.close();
        out.close();
        assertEquals(1, sink.closeCalls);
        assertEquals(10, sink.written.size());
        assertFalse(out.isOpen());

        MemoryChannel source = new MemoryChannel(new byte[100]);
        CryptoInputStream in = ctr.decrypt(source);
        in.close();
        in.close();
        assertEquals(1, source.closeCount);
        assertThrows(ClosedChannelException.class, in::read);
        assertThrows(ClosedChannelException.class, () -> in.read(new byte[5], 0, 5));
        assertThrows(ClosedChannelException.class, () -> in.read(ByteBuffer.allocate(5)));
        assertThrows(ClosedChannelException.class, () -> in.skip(5));
        assertThrows(ClosedChannelException.class, in::available);
        assertThrows(ClosedChannelException.class, () -> in.seek(0));
        assertThrows(ClosedChannelException.class, () -> in.read(0, new byte[5], 0, 5));
        assertThrows(ClosedChannelException.class, () -> in.readFully(0, new byte[5]));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void writeAfterCloseThrows(EngineKind kind) throws IOException {
        CtrStreams ctr = CtrFixtures.builder(kind, key(16), new byte[16]).bufferSize(BUFFER).build();
        CryptoOutputStream out = ctr.encrypt(new ByteArrayOutputStream());
        out.close();
        assertThrows(ClosedChannelException.class, () -> out.write(1));
        assertThrows(ClosedChannelException.class, () -> out.write(new byte[300], 0, 300));
        assertThrows(ClosedChannelException.class, () -> out.write(new byte[3]));
        assertThrows(ClosedChannelException.class, () -> out.write(ByteBuffer.allocateDirect(3)));
        assertThrows(ClosedChannelException.class, () -> out.write(ByteBuffer.allocate(3)));
    }

    /** The wrapped stream's close fails: everything was written first, the failure surfaces once, the stream is closed. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void closeWhenTheWrappedStreamFailsToCloseStillReleases(EngineKind kind) throws IOException {
        byte[] key = key(16);
        byte[] iv = new byte[16];
        byte[] plain = bytes(9, 500);
        CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(BUFFER).build();
        FaultyOutputStream sink = new FaultyOutputStream();
        sink.failClose = true;
        CryptoOutputStream out = ctr.encrypt(sink);
        out.write(plain);
        IOException e = assertThrows(IOException.class, out::close);
        assertEquals("injected close failure", e.getMessage());
        assertArrayEquals(referenceCtr(key, iv, 0, plain), sink.written.toByteArray(), "drained before closing");
        assertFalse(out.isOpen());
        out.close(); // idempotent: no second attempt, no second exception
        assertEquals(1, sink.closeCalls);
        assertThrows(ClosedChannelException.class, () -> out.write(1));

        InputStream failingIn = new FilterInputStream(new ByteArrayInputStream(new byte[10])) {
            @Override
            public void close() throws IOException {
                throw new IOException("injected input close failure");
            }
        };
        CryptoInputStream in = ctr.decrypt(failingIn);
        IOException ie = assertThrows(IOException.class, in::close);
        assertEquals("injected input close failure", ie.getMessage());
        assertFalse(in.isOpen());
        in.close();
        assertThrows(ClosedChannelException.class, in::read);
    }

    /** Both the final write and the close fail: the first failure is thrown, the second suppressed in it. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void closeRethrowsTheFirstFailureWithTheOthersSuppressed(EngineKind kind) throws IOException {
        CtrStreams ctr = CtrFixtures.builder(kind, key(16), new byte[16]).bufferSize(BUFFER).build();
        FaultyOutputStream sink = new FaultyOutputStream();
        sink.failWriteAt = 0;
        sink.failClose = true;
        CryptoOutputStream out = ctr.encrypt(sink);
        out.write(new byte[20]); // buffered: nothing reaches the sink yet
        IOException e = assertThrows(IOException.class, out::close);
        assertEquals("injected write failure", e.getMessage());
        assertEquals(1, e.getSuppressed().length, Arrays.toString(e.getSuppressed()));
        assertEquals("injected close failure", e.getSuppressed()[0].getMessage());
        assertEquals(1, sink.closeCalls, "the wrapped stream is closed even though the last write failed");
        assertFalse(out.isOpen());
        assertThrows(ClosedChannelException.class, () -> out.write(1));
        out.close();
        assertEquals(1, sink.closeCalls);

        // With closeUnderlying(false) a failing final flush is reported the same way.
        CtrStreams keepOpen = CtrFixtures.builder(kind, key(16), new byte[16]).bufferSize(BUFFER).closeUnderlying(false).build();
        FaultyOutputStream sink2 = new FaultyOutputStream();
        sink2.failFlush = true;
        CryptoOutputStream out2 = keepOpen.encrypt(sink2);
        out2.write(new byte[20]);
        IOException e2 = assertThrows(IOException.class, out2::close);
        assertEquals("injected flush failure", e2.getMessage());
        assertEquals(20, sink2.written.size());
        assertEquals(0, sink2.closeCalls);
        assertFalse(out2.isOpen());
    }

    /**
     * A failed write poisons the stream: later writes, flushes and the final close send nothing
     * more (the wrapped stream would otherwise get ciphertext out of step with its position).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void aWriteFailurePoisonsTheStream(EngineKind kind) throws IOException {
        // A fresh instance per stream: each encrypts one stream (the same key and IV, on purpose).
        CtrStreams.Builder ctr = CtrFixtures.builder(kind, key(16), new byte[16]).bufferSize(BUFFER);
        for (int size : new int[] {BUFFER, 5000}) { // a buffer filled by small writes, and a large write
            FaultyOutputStream sink = new FaultyOutputStream();
            sink.failWriteAt = 1; // the second bufferful fails
            CryptoOutputStream out = ctr.build().encrypt(sink);
            IOException first = assertThrows(IOException.class, () -> {
                if (size == BUFFER) {
                    for (int k = 0; k < 30; k++) {
                        out.write(new byte[100]); // the second bufferful drained fails
                    }
                } else {
                    out.write(new byte[size]); // encrypted straight into the buffer, a bufferful at a time
                }
            });
            assertEquals("injected write failure", first.getMessage());
            // What got through before the failure (one bufferful, as the buffer is now) is a
            // correct prefix of the ciphertext; how much that is, is the buffer's business.
            byte[] through = sink.written.toByteArray();
            int attempted = size == BUFFER ? 3000 : size;
            assertTrue(through.length > 0 && through.length < attempted, "bytes through: " + through.length);
            assertArrayEquals(referenceCtr(key(16), new byte[16], 0, new byte[through.length]), through);
            IOException later = assertThrows(IOException.class, () -> out.write(1));
            assertSame(first, later.getCause(), "later writes name the first failure");
            assertThrows(IOException.class, () -> out.write(new byte[2000]));
            assertThrows(IOException.class, () -> out.write(ByteBuffer.allocateDirect(10)));
            assertThrows(IOException.class, out::flush);
            IOException atClose = assertThrows(IOException.class, out::close, "close releases and says so again");
            assertSame(first, atClose.getCause());
            out.close(); // once closed, nothing more
            assertEquals(0, sink.writesAfterFailure, "nothing written after the failure");
            assertEquals(1, sink.closeCalls);
        }

        // A RuntimeException from the wrapped stream is reported as an IOException and poisons too.
        CryptoOutputStream out = ctr.build().encrypt(new java.io.OutputStream() {
            @Override
            public void write(int b) {
                throw new UncheckedIOException(new IOException("runtime failure"));
            }

            @Override
            public void write(byte[] b, int off, int len) {
                throw new IllegalStateException("runtime failure");
            }
        });
        IOException e = assertThrows(IOException.class, () -> out.write(new byte[3000]));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertThrows(IOException.class, () -> out.write(1));
        assertSame(e.getCause(), assertThrows(IOException.class, out::close).getCause());
    }

    /** Bad array ranges are rejected without poisoning the stream or losing bytes. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void badRangesAreRejectedAndTheStreamCarriesOn(EngineKind kind) throws IOException {
        byte[] key = key(16);
        byte[] iv = new byte[16];
        CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(BUFFER).build();
        byte[] plain = bytes(10, 40);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (CryptoOutputStream out = ctr.encrypt(sink)) {
            out.write(plain, 0, 20);
            IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> out.write(plain, 30, 11));
            assertTrue(e.getMessage().contains("30") && e.getMessage().contains("11"), e.getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> out.write(plain, -1, 1));
            assertThrows(NullPointerException.class, () -> out.write((byte[]) null, 0, 1));
            out.write(plain, 20, 20);
            assertEquals(40, out.getPos());
        }
        assertArrayEquals(referenceCtr(key, iv, 0, plain), sink.toByteArray());

        try (CryptoInputStream in = ctr.decrypt(new ByteArrayInputStream(sink.toByteArray()))) {
            byte[] b = new byte[10];
            assertThrows(IndexOutOfBoundsException.class, () -> in.read(b, 5, 6));
            assertThrows(IndexOutOfBoundsException.class, () -> in.read(b, -1, 2));
            assertEquals(0, in.read(b, 10, 0));
            assertArrayEquals(plain, in.readAllBytes());
        }
    }

    // ---------------------------------------------------------------- helpers

    static int piece(Random random) {
        return switch (random.nextInt(4)) {
            case 0 -> 1;
            case 1 -> 1 + random.nextInt(255);
            case 2 -> 256 + random.nextInt(2 * BUFFER);
            default -> 1 + random.nextInt(3 * BUFFER);
        };
    }

    static byte[] pad(byte[] plain, int before) {
        byte[] padded = new byte[before + plain.length + 3];
        System.arraycopy(plain, 0, padded, before, plain.length);
        return padded;
    }

    /** A WritableByteChannel that takes at most {@code max} bytes per write call. */
    static final class TrickleChannel implements WritableByteChannel {
        private final ByteArrayOutputStream out;
        private final int max;
        private boolean open = true;

        TrickleChannel(ByteArrayOutputStream out, int max) {
            this.out = out;
            this.max = max;
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            if (!open) {
                throw new ClosedChannelException();
            }
            int n = Math.min(src.remaining(), max);
            byte[] b = new byte[n];
            src.get(b);
            out.write(b);
            return n;
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            open = false;
        }
    }

    /** A ReadableByteChannel (not seekable) returning at most {@code max} bytes per read. */
    static final class ShortReadChannel implements ReadableByteChannel {
        private final byte[] data;
        private final int max;
        private int pos;
        private boolean open = true;

        ShortReadChannel(byte[] data, int max) {
            this.data = data;
            this.max = max;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            if (!open) {
                throw new ClosedChannelException();
            }
            if (pos == data.length) {
                return -1;
            }
            int n = Math.min(Math.min(dst.remaining(), max), data.length - pos);
            dst.put(data, pos, n);
            pos += n;
            return n;
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            open = false;
        }
    }
}
