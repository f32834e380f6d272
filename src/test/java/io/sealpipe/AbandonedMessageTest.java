package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ctr.CryptoOutputStream;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.SnappyFraming;
import io.sealpipe.internal.TextLikeData;
import io.sealpipe.snappy.FramedSnappyOutputStream;
import io.sealpipe.snappy.SnappyInternals;
import io.sealpipe.snappy.SnappyStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A writer whose data stops short must never leave a message that a reader accepts: {@code
 * abort()} abandons a message on request, and a failure of any kind in any layer (an Error
 * included, on a helper thread included) reaches the caller and leaves the message unfinished.
 */
class AbandonedMessageTest {
    private static final byte[] KEY = new byte[32];
    private static final byte[] PLAIN = TextLikeData.generate(7, 3 << 20);

    private static GcmStreams gcm(int parallelism) {
        return GcmStreams.builder().key(KEY).parallelism(parallelism).build();
    }

    /** Reads the message back: it must be rejected as truncated, never accepted as shorter. */
    private static void assertTruncated(GcmStreams gcm, byte[] sealed) throws IOException {
        try (InputStream in = gcm.decrypt(new ByteArrayInputStream(sealed))) {
            StreamAuthenticationException e = assertThrows(StreamAuthenticationException.class, in::readAllBytes);
            assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        }
    }

    /** The defect: the pattern of README's GCM example, with a source that fails, seals a valid shorter message. */
    @Test
    void closeCannotSeeAFailureOutsideTheStreamButAbortCan() throws IOException {
        GcmStreams gcm = gcm(1);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        InputStream source = new FailingSource(PLAIN, 100_000);
        assertThrows(IOException.class, () -> {
            try (GcmOutputStream out = gcm.encrypt(sink)) {
                source.transferTo(out);
            }
        });
        // What close() does when it cannot know (documented): the message ends.
        try (InputStream in = gcm.decrypt(new ByteArrayInputStream(sink.toByteArray()))) {
            assertEquals(100_000, in.readAllBytes().length);
        }

        ByteArrayOutputStream safe = new ByteArrayOutputStream();
        InputStream again = new FailingSource(PLAIN, 100_000);
        IOException e = assertThrows(IOException.class, () -> {
            try (GcmOutputStream out = gcm.encrypt(safe)) {
                try {
                    again.transferTo(out);
                } catch (Throwable t) {
                    out.abort();
                    throw t;
                }
            }
        });
        assertEquals("source failed (test)", e.getMessage());
        assertTruncated(gcm, safe.toByteArray());
    }

    @ParameterizedTest(name = "parallelism {0}")
    @ValueSource(ints = {1, 4})
    void abortNeverEndsAGcmMessageAndReleasesEverything(int parallelism) throws IOException {
        GcmStreams gcm = gcm(parallelism);
        ClosingSink sink = new ClosingSink();
        GcmOutputStream out = gcm.encrypt(sink);
        out.write(PLAIN, 0, 2 << 20); // past the point where workers join in
        out.write(PLAIN, 2 << 20, 12_345);
        out.abort();
        assertTrue(sink.closed, "the wrapped stream is closed");
        assertFalse(out.isOpen());
        assertThrows(ClosedChannelException.class, () -> out.write(1));
        out.close(); // does nothing
        out.abort(); // neither
        assertTruncated(gcm, sink.toByteArray());
    }

    @Test
    void abortOfACtrStreamPassesNothingBufferedOn() throws IOException {
        CtrStreams ctr = CtrStreams.builder().key(KEY).iv(new byte[16]).build();
        ClosingSink sink = new ClosingSink();
        CryptoOutputStream out = ctr.encrypt(sink);
        out.write(PLAIN, 0, 100); // small writes are buffered
        out.abort();
        assertEquals(0, sink.size());
        assertTrue(sink.closed);
        assertThrows(ClosedChannelException.class, () -> out.write(1));
    }

    @Test
    void abortOfTheSnappyLayerAbandonsTheMessageUnderIt() throws IOException {
        GcmStreams gcm = gcm(1);
        ClosingSink sink = new ClosingSink();
        FramedSnappyOutputStream out = SnappyStreams.builder().build().compress(gcm.encrypt(sink));
        out.write(PLAIN, 0, 1 << 20);
        out.flush(); // everything so far reaches the message
        out.abort();
        assertTrue(sink.closed);
        assertTruncated(gcm, sink.toByteArray());
    }

    /** An Error thrown by the wrapped stream was not recorded: close() then ended the message. */
    @Test
    void anErrorBelowTheGcmStreamLeavesTheMessageUnfinished() throws IOException {
        GcmStreams gcm = gcm(1);
        ClosingSink sink = new ClosingSink();
        sink.errorAtWrite = 3;
        GcmOutputStream out = gcm.encrypt(sink);
        AssertionError error = new AssertionError("sink broke (test)");
        sink.error = error;
        assertSame(error, assertThrows(AssertionError.class, () -> out.write(PLAIN, 0, 1 << 20)));
        assertThrows(IOException.class, () -> out.write(1), "a failed stream stays failed");
        IOException e = assertThrows(IOException.class, out::close);
        assertSame(error, e.getCause());
        assertTrue(sink.closed);
        try (InputStream in = gcm.decrypt(new ByteArrayInputStream(sink.toByteArray()))) {
            assertThrows(StreamAuthenticationException.class, in::readAllBytes);
        }
    }

    /**
     * A frame that fails to compress (on a helper thread or this one, with an exception or an
     * Error): the writes or close() throw it, and the encrypted message is left unfinished. It
     * used to be closed normally with the frames in flight missing.
     */
    @ParameterizedTest(name = "parallelism {0}")
    @ValueSource(ints = {1, 4})
    void aFrameThatFailsToCompressLeavesTheMessageUnfinished(int parallelism) throws IOException {
        for (Throwable failure : new Throwable[] {new IOException("frame broke (test)"),
                new OutOfMemoryError("frame broke (test)")}) {
            GcmStreams gcm = gcm(1);
            ClosingSink sink = new ClosingSink();
            AtomicInteger frames = new AtomicInteger();
            SnappyInternals.FrameEncoder failing = (in, off, len, frame, crc) -> {
                if (frames.incrementAndGet() == 20) {
                    throw sneaky(failure);
                }
                return SnappyFraming.encodeFrame(in, off, len, frame, crc);
            };
            SnappyStreams snappy = SnappyStreams.builder().parallelism(parallelism).build();
            FramedSnappyOutputStream out = SnappyInternals.compress(gcm.encrypt(sink), snappy, failing);
            Throwable thrown = assertThrows(Throwable.class, () -> {
                try (out) {
                    for (int off = 0; off < PLAIN.length; off += 10_000) {
                        out.write(PLAIN, off, Math.min(10_000, PLAIN.length - off));
                    }
                }
            });
            assertTrue(chain(thrown).contains("frame broke (test)"), "the failure comes out: " + chain(thrown));
            assertTrue(sink.closed, "the message below was released");
            assertTruncated(gcm, sink.toByteArray());
        }
    }

    /** An Error thrown by the layer under the Snappy stream was not recorded either. */
    @Test
    void anErrorUnderTheSnappyLayerLeavesTheMessageUnfinished() throws IOException {
        GcmStreams gcm = gcm(1);
        ClosingSink sink = new ClosingSink();
        GcmOutputStream message = gcm.encrypt(sink);
        OutputStream breaking = new AbortableFilter(message, 5);
        FramedSnappyOutputStream out = SnappyStreams.builder().build().compress(breaking);
        assertThrows(StackOverflowError.class, () -> {
            try (out) {
                out.write(PLAIN);
            }
        });
        assertFalse(message.isOpen());
        assertTruncated(gcm, sink.toByteArray());
    }

    private static String chain(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(c).append(" <- ");
            for (Throwable s : c.getSuppressed()) {
                b.append("[suppressed ").append(s).append("] ");
            }
        }
        return b.toString();
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }

    /** Gives {@code limit} bytes of data, then fails. */
    private static final class FailingSource extends InputStream {
        private final InputStream data;

        FailingSource(byte[] plain, int limit) {
            this.data = new ByteArrayInputStream(plain, 0, limit);
        }

        @Override
        public int read() throws IOException {
            throw new UnsupportedOperationException();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = data.read(b, off, Math.min(len, 8_192));
            if (n < 0) {
                throw new IOException("source failed (test)");
            }
            return n;
        }
    }

    /** Keeps what is written; can throw an Error at one write. */
    private static final class ClosingSink extends ByteArrayOutputStream {
        boolean closed;
        int errorAtWrite = -1;
        Error error;
        private int writes;

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            if (++writes == errorAtWrite) {
                throw error;
            }
            super.write(b, off, len);
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** A sealpipe-like layer that forwards abort() and throws an Error at one write. */
    private static final class AbortableFilter extends FilterOutputStream implements Abortable {
        private final GcmOutputStream message;
        private final int errorAtWrite;
        private int writes;

        AbortableFilter(GcmOutputStream message, int errorAtWrite) {
            super(message);
            this.message = message;
            this.errorAtWrite = errorAtWrite;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (++writes == errorAtWrite) {
                throw new StackOverflowError("layer broke (test)");
            }
            out.write(b, off, len);
        }

        @Override
        public void abort() {
            message.abort();
        }
    }
}
