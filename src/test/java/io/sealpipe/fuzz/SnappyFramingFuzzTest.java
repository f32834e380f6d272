package io.sealpipe.fuzz;

import static io.sealpipe.fuzz.GcmStreamFuzzTest.check;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sealpipe.snappy.SnappyStreams;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.xerial.snappy.SnappyFramedInputStream;

/**
 * Fuzzes the Snappy framing reader ({@link SnappyStreams#decompress}) with arbitrary bytes. It
 * either returns the data or throws an {@link IOException}, never another exception; after a
 * failure every read fails again; it allocates a bounded amount whatever lengths the input
 * claims; parallelism 2 gives the same outcome as 1; and where snappy-java's own framed reader
 * (an independent implementation) accepts what it accepts, both return the same data.
 *
 * <p>Input: parallelism (u8: 1 or 2), read size (u16, 0: one byte at a time), then the stream.
 * Seeds: {@link FuzzSeeds}.
 */
class SnappyFramingFuzzTest {
    /**
     * What one decompression on this thread may allocate: a frame's two buffers (64 KiB of data,
     * 76 KiB of body), the stream object, an exception; far below the 16 MiB a chunk can claim.
     */
    static final long ALLOCATION_LIMIT = 1 << 20;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final SnappyStreams[] SNAPPY = {
        SnappyStreams.builder().parallelism(1).build(), SnappyStreams.builder().parallelism(2).build()};

    @FuzzTest(maxDuration = "5m")
    void decompress(byte[] data) throws IOException {
        FuzzInput in = new FuzzInput(data);
        int parallelism = 1 + in.u8() % 2;
        int readSize = in.u16();
        byte[] stream = in.bytes(data.length);
        String what = "parallelism " + parallelism + ", reads of " + readSize + ", " + stream.length + " bytes";

        long before = THREADS.getCurrentThreadAllocatedBytes();
        Outcome ours = decompress(SNAPPY[0], stream, readSize, what);
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        if (allocated > ALLOCATION_LIMIT) {
            // The first run of a path loads (and, fuzzing, instruments) classes on this thread:
            // count a second run, which only decompresses.
            before = THREADS.getCurrentThreadAllocatedBytes();
            decompress(SNAPPY[0], stream, readSize, what);
            allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        }
        check(allocated <= ALLOCATION_LIMIT, what + ": allocated " + allocated + " bytes");
        if (parallelism > 1) {
            Outcome parallel = decompress(SNAPPY[1], stream, readSize, what);
            check(parallel.equals(ours), what + ": parallelism 2 gave " + parallel + ", 1 gave " + ours);
        }
        if (ours.failure() == null) {
            // snappy-java is stricter in places (it refuses an empty data frame, which the format
            // allows), so only data both accept is compared.
            Outcome theirs = snappyJava(stream);
            check(theirs.failure() != null || theirs.equals(ours),
                    what + ": snappy-java's reader gave " + theirs + ", ours " + ours);
        }
    }

    /** The SHA-256 and length of the data, or the failure's message. */
    record Outcome(String sha256, long length, String failure) {
        static Outcome of(MessageDigest digest, long length) {
            return new Outcome(java.util.HexFormat.of().formatHex(digest.digest()), length, null);
        }

        static Outcome failed(Exception e) {
            return new Outcome(null, -1, e.getClass().getName() + ": " + e.getMessage());
        }

        @Override
        public boolean equals(Object o) {
            // Two failures are the same outcome whatever their messages say.
            return o instanceof Outcome x && (failure != null ? x.failure != null
                    : x.failure == null && sha256.equals(x.sha256) && length == x.length);
        }

        @Override
        public int hashCode() {
            return failure != null ? 1 : sha256.hashCode();
        }
    }

    private static Outcome decompress(SnappyStreams snappy, byte[] stream, int readSize, String what) {
        MessageDigest digest = sha256();
        long length = 0;
        byte[] buffer = new byte[Math.max(1, readSize)];
        try (InputStream plain = snappy.decompress(new ByteArrayInputStream(stream))) {
            try {
                for (int n; (n = readSize == 0 ? single(plain, buffer) : plain.read(buffer, 0, readSize)) >= 0; ) {
                    if (n <= 0 || n > buffer.length) { // not check(): no message built per read, counted as allocation
                        throw new AssertionError(what + ": read returned " + n);
                    }
                    digest.update(buffer, 0, n);
                    length += n;
                }
                check(plain.read() == -1, what + ": a read after the end returned data");
                return Outcome.of(digest, length);
            } catch (IOException e) {
                checkFailsAgain(plain, what);
                return Outcome.failed(e);
            }
        } catch (IOException e) {
            throw new AssertionError(what + ": close() threw", e);
        } catch (RuntimeException | Error e) {
            throw new AssertionError(what + ": not an IOException", e);
        }
    }

    private static int single(InputStream in, byte[] buffer) throws IOException {
        int b = in.read();
        if (b < 0) {
            return -1;
        }
        buffer[0] = (byte) b;
        return 1;
    }

    private static void checkFailsAgain(InputStream plain, String what) {
        try {
            int b = plain.read(new byte[8], 0, 8);
            throw new AssertionError(what + ": a read after the failure returned " + b);
        } catch (IOException expected) {
            // failed again, as documented
        }
    }

    private static Outcome snappyJava(byte[] stream) {
        MessageDigest digest = sha256();
        long length = 0;
        try (InputStream in = new SnappyFramedInputStream(new ByteArrayInputStream(stream), true)) {
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                digest.update(buffer, 0, n);
                length += n;
            }
            return Outcome.of(digest, length);
        } catch (IOException | RuntimeException e) {
            return Outcome.failed(e);
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
