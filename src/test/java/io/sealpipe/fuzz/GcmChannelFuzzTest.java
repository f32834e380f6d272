package io.sealpipe.fuzz;

import static io.sealpipe.fuzz.GcmFuzzFixtures.CHUNK;
import static io.sealpipe.fuzz.GcmFuzzFixtures.HEADER;
import static io.sealpipe.fuzz.GcmFuzzFixtures.intact;
import static io.sealpipe.fuzz.GcmFuzzFixtures.tamper;
import static io.sealpipe.fuzz.GcmStreamFuzzTest.check;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sealpipe.MemorySeekableChannel;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.fuzz.GcmFuzzFixtures.Message;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzzes the random-access GCM reader ({@link GcmStreams#open}, {@link GcmSeekableChannel}) with
 * tampered frozen messages and reads at chosen positions. Every read either returns bytes that
 * are the original plaintext at that position, all from intact chunks; or returns -1 (or
 * {@code size()} answers) only when the message length is the original one and the position is
 * at or past its end; or throws a {@link StreamAuthenticationException} (an
 * {@link EOFException} for {@code readFully} past the end, an {@link IllegalArgumentException}
 * for a negative position). The intact message never fails.
 *
 * <p>Input: message (u8), engine (u8), bytes per read of the wrapped channel (u16, 0: all), the
 * tampering ({@link GcmFuzzFixtures#tamper}), then reads to its end: kind (u8), position (u31,
 * taken modulo the plaintext length plus three chunks), length (u16). Seeds: {@link FuzzSeeds}.
 */
class GcmChannelFuzzTest {
    /** The read kinds: positioned reads (heap, direct, array, readFully), sequential, size(), a negative position. */
    static final int HEAP = 0, DIRECT = 1, ARRAY = 2, READ_FULLY = 3, SEQUENTIAL = 4, SIZE = 5, NEGATIVE = 6,
            KINDS = 7;

    @FuzzTest(maxDuration = "5m")
    void read(byte[] data) throws IOException {
        FuzzInput in = new FuzzInput(data);
        Message message = GcmFuzzFixtures.message(in.u8());
        GcmStreams gcm = message.streams(in.u8());
        int feed = in.u16();
        List<String> trace = new ArrayList<>();
        byte[] tampered = tamper(message.sealed(), in, trace);
        boolean original = Arrays.equals(tampered, message.sealed());
        String what = message.name() + " " + trace + ", feed " + feed + ", " + gcm.engine().kind();

        GcmSeekableChannel channel;
        try {
            channel = gcm.open(new MemorySeekableChannel(tampered, feed == 0 ? Integer.MAX_VALUE : feed));
        } catch (StreamAuthenticationException e) {
            check(!original, what + ": open rejected the intact message: " + e);
            check(!Arrays.equals(tampered, 0, Math.min(HEADER, tampered.length), message.sealed(), 0, HEADER),
                    what + ": open rejected a message whose header is intact: " + e);
            return;
        } catch (IOException | RuntimeException | Error e) {
            throw new AssertionError(what + ": open threw something else than a StreamAuthenticationException", e);
        }
        try (channel) {
            while (in.hasMore()) {
                int kind = in.u8() % KINDS;
                long position = in.u31() % (message.plain().length + 3L * CHUNK + 1);
                int length = in.u16();
                String read = what + ", read kind " + kind + " at " + position + " of " + length;
                try {
                    read(channel, kind, position, length, message, tampered, read);
                } catch (StreamAuthenticationException e) {
                    check(!original, read + ": rejected the intact message: " + e);
                } catch (EOFException e) {
                    check(kind == READ_FULLY && position + length > message.plain().length,
                            read + ": EOFException within the plaintext: " + e);
                } catch (IOException | RuntimeException | Error e) {
                    throw new AssertionError(read + ": threw something else than a StreamAuthenticationException", e);
                }
            }
        } catch (ClosedChannelException | NonWritableChannelException e) {
            throw new AssertionError(what + ": " + e, e);
        }
    }

    private static void read(GcmSeekableChannel channel, int kind, long position, int length, Message message,
            byte[] tampered, String what) throws IOException {
        byte[] plain = message.plain();
        switch (kind) {
            case SIZE -> {
                long size = channel.size();
                check(size == plain.length && tampered.length == message.sealed().length,
                        what + ": size() answered " + size + " for a message of " + plain.length);
                return;
            }
            case NEGATIVE -> {
                try {
                    channel.read(ByteBuffer.allocate(length), -1 - position);
                    throw new AssertionError(what + ": a read at a negative position did not throw");
                } catch (IllegalArgumentException expected) {
                    return;
                }
            }
            case READ_FULLY -> {
                byte[] b = new byte[length];
                channel.readFully(position, b, 0, length);
                checkBytes(b, 0, length, position, message, tampered, what);
                return;
            }
            case ARRAY -> {
                byte[] b = new byte[length + 3];
                int off = (int) (position % 4);
                int n = channel.read(position, b, off, length - Math.min(length, off));
                checkResult(n, length - Math.min(length, off), position, message, tampered, what);
                checkBytes(b, off, Math.max(n, 0), position, message, tampered, what);
                check(Arrays.equals(b, 0, off, new byte[off], 0, off)
                        && Arrays.equals(b, off + Math.max(n, 0), b.length, new byte[b.length], off + Math.max(n, 0),
                                b.length), what + ": wrote outside the bytes it returned");
                return;
            }
            default -> {
                ByteBuffer dst = kind == DIRECT ? ByteBuffer.allocateDirect(length) : ByteBuffer.allocate(length);
                int n;
                if (kind == SEQUENTIAL) {
                    channel.position(position);
                    n = channel.read(dst);
                    check(channel.position() == position + Math.max(n, 0), what + ": the position moved wrongly");
                } else {
                    n = channel.read(dst, position);
                }
                checkResult(n, length, position, message, tampered, what);
                check(dst.position() == Math.max(n, 0), what + ": returned " + n + " but filled " + dst.position());
                byte[] b = new byte[dst.flip().remaining()];
                dst.get(b);
                checkBytes(b, 0, b.length, position, message, tampered, what);
            }
        }
    }

    /** The count a read returned: -1 only past the authentic end, 0 only for an empty read. */
    private static void checkResult(int n, int length, long position, Message message, byte[] tampered, String what) {
        if (n < 0) {
            check(n == -1 && length > 0, what + ": returned " + n);
            check(position >= message.plain().length && tampered.length == message.sealed().length,
                    what + ": returned -1 before the authentic end");
        } else {
            check(n <= length && (n > 0 || length == 0), what + ": returned " + n + " for " + length);
        }
    }

    /** b[off, off + n) must be the plaintext at {@code position}, from intact chunks only. */
    private static void checkBytes(byte[] b, int off, int n, long position, Message message, byte[] tampered,
            String what) {
        if (n == 0) {
            return;
        }
        byte[] plain = message.plain();
        check(position + n <= plain.length, what + ": returned " + n + " bytes, past the plaintext's end");
        check(Arrays.equals(b, off, off + n, plain, (int) position, (int) position + n),
                what + ": returned bytes that are not the plaintext at that position");
        for (long c = position / CHUNK; c <= (position + n - 1) / CHUNK; c++) {
            check(intact(message.sealed(), tampered, c), what + ": returned plaintext of chunk " + c
                    + ", which was tampered with");
        }
    }
}
