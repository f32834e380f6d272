package io.sealpipe.fuzz;

import static io.sealpipe.fuzz.GcmFuzzFixtures.releasable;
import static io.sealpipe.fuzz.GcmFuzzFixtures.tamper;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.fuzz.GcmFuzzFixtures.Message;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzzes the streaming GCM reader ({@link GcmStreams#decrypt}) with tampered frozen messages.
 * For every input: either the ciphertext is the original one and the reader returns exactly its
 * plaintext, or it fails with a {@link StreamAuthenticationException}; never another exception;
 * every byte it returned before failing is the original plaintext, from chunks that were
 * intact and not the last ones; a failed read leaves zeros in the caller's array beyond what it
 * returned; and after a failure every read fails again.
 *
 * <p>Input: message (u8), engine (u8), source: stream, heap or direct buffer, channel (u8),
 * bytes per read of the wrapped stream (u16, 0: all), read size (u16, 0: one byte at a time),
 * then the tampering ({@link GcmFuzzFixtures#tamper}). Seeds: {@link FuzzSeeds}.
 */
class GcmStreamFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void decrypt(byte[] data) throws IOException {
        FuzzInput in = new FuzzInput(data);
        Message message = GcmFuzzFixtures.message(in.u8());
        GcmStreams gcm = message.streams(in.u8());
        int source = in.u8() % 4;
        int feed = in.u16();
        int readSize = in.u16();
        List<String> trace = new ArrayList<>();
        byte[] tampered = tamper(message.sealed(), in, trace);
        String what = message.name() + " " + trace + ", source " + source + ", feed " + feed + ", reads of "
                + readSize + ", " + gcm.engine().kind();

        ByteArrayOutputStream released = new ByteArrayOutputStream();
        StreamAuthenticationException failure = null;
        try (InputStream plain = open(gcm, tampered, source, feed)) {
            try {
                readAll(plain, readSize, released, what);
            } catch (StreamAuthenticationException e) {
                failure = e;
                checkFailsAgain(plain, what);
            }
        } catch (StreamAuthenticationException e) {
            failure = e; // from close(): it must not fail after a clean end either
        } catch (IOException | RuntimeException | Error e) {
            throw new AssertionError(what + ": not a StreamAuthenticationException", e);
        }

        byte[] out = released.toByteArray();
        if (failure == null) {
            check(Arrays.equals(tampered, message.sealed()), what + ": accepted a tampered message");
            check(Arrays.equals(out, message.plain()), what + ": returned another plaintext");
        } else {
            check(!Arrays.equals(tampered, message.sealed()), what + ": rejected the intact message: " + failure);
            check(Arrays.equals(out, 0, out.length, message.plain(), 0, Math.min(out.length, message.plain().length)),
                    what + ": returned bytes that are not the plaintext's first " + out.length);
            check(out.length <= releasable(message.sealed(), tampered),
                    what + ": returned " + out.length + " bytes, more than the intact chunks before the tampering hold");
        }
    }

    private static InputStream open(GcmStreams gcm, byte[] tampered, int source, int feed) {
        return switch (source) {
            case 0 -> gcm.decrypt(new ShortReads(tampered, feed));
            case 1 -> gcm.decrypt(ByteBuffer.wrap(tampered));
            case 2 -> gcm.decrypt(ByteBuffer.allocateDirect(tampered.length).put(tampered).flip());
            default -> gcm.decrypt(Channels.newChannel(new ShortReads(tampered, feed)));
        };
    }

    /** Reads to the end, checking after each read that nothing beyond the bytes returned was written. */
    private static void readAll(InputStream plain, int readSize, ByteArrayOutputStream released, String what)
            throws IOException {
        if (readSize == 0) {
            for (int b; (b = plain.read()) >= 0; ) {
                released.write(b);
            }
        } else {
            byte[] buffer = new byte[readSize + 2];
            while (true) {
                Arrays.fill(buffer, (byte) 0);
                int n;
                try {
                    n = plain.read(buffer, 1, readSize);
                } catch (StreamAuthenticationException e) {
                    check(isZero(buffer, 0, buffer.length), what + ": a failed read left bytes in the caller's array");
                    throw e;
                }
                // Not check(): no message is built per read.
                if (n != -1 && (n <= 0 || n > readSize)) {
                    throw new AssertionError(what + ": read returned " + n + " for " + readSize);
                }
                if (n < 0) {
                    break;
                }
                if (!isZero(buffer, 0, 1) || !isZero(buffer, 1 + n, buffer.length)) {
                    throw new AssertionError(what + ": a read wrote outside the " + n + " bytes it returned");
                }
                released.write(buffer, 1, n);
            }
        }
        check(plain.read() == -1, what + ": a read after the end returned data");
    }

    private static void checkFailsAgain(InputStream plain, String what) throws IOException {
        try {
            int b = plain.read();
            throw new AssertionError(what + ": a read after the failure returned " + b);
        } catch (StreamAuthenticationException expected) {
            // poisoned, as documented
        }
    }

    private static boolean isZero(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    static void check(boolean ok, String message) {
        if (!ok) {
            throw new AssertionError(message);
        }
    }

    /** The ciphertext as a stream that returns at most {@code feed} bytes per read (0: no limit). */
    static final class ShortReads extends ByteArrayInputStream {
        private final int feed;

        ShortReads(byte[] data, int feed) {
            super(data);
            this.feed = feed;
        }

        @Override
        public synchronized int read(byte[] b, int off, int len) {
            return super.read(b, off, feed == 0 ? len : Math.min(len, feed));
        }
    }
}
