package io.sealpipe;

import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.ReaderRaces.closeOnAnotherThread;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link GcmSeekableChannel#close()} racing positioned reads, each race forced to its moment by a
 * hook in the engine or the channel (no sleeps), on every engine. The wrapped channel stays open
 * ({@code closeUnderlying(false)}), so a read that gets past close() reaches decryption: it must
 * fail as closed, never report tampering.
 */
@Timeout(60) // a safety net against a deadlocked fix only: no test waits for time
class GcmCloseRaceTest {
    private static final byte[] KEY = bytes(32, 32);
    private static final byte[] PLAIN = bytes(5, 3 * 16384 + 100);

    private static GcmStreams gcm(CryptoEngine engine) {
        return GcmStreams.builder().key(KEY).engine(engine).closeUnderlying(false).build();
    }

    private static byte[] sealed(EngineKind kind) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = gcm(TestEngines.engine(kind)).encrypt(sink)) {
            out.write(PLAIN);
        }
        return sink.toByteArray();
    }

    /**
     * close() runs while a positioned read makes its reader, after the message key was handed to
     * the engine: the read fails as closed. Before, the engine read the key after close() zeroed
     * it, and the read reported the chunk as tampered (StreamAuthenticationException).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeWhileAPositionedReadMakesItsReaderFailsTheReadAsClosed(EngineKind kind) throws IOException {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        GcmSeekableChannel channel = gcm(engine).open(new MemorySeekableChannel(sealed(kind), 1 << 20));
        engine.beforeNextCipher(Thread.currentThread(), () -> closeOnAnotherThread(channel));
        assertThrows(ClosedChannelException.class, () -> channel.read(20_000, new byte[100], 0, 100));
        assertThrows(ClosedChannelException.class, () -> channel.read(ByteBuffer.allocate(100), 20_000),
                "and so does the next one");
        assertEquals(0, engine.open(), "ciphers left open");
    }

    /** The same while a read works out the authenticated size (size() makes a reader too). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeWhileSizeMakesItsReaderFailsAsClosed(EngineKind kind) throws IOException {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        GcmSeekableChannel channel = gcm(engine).open(new MemorySeekableChannel(sealed(kind), 1 << 20));
        engine.beforeNextCipher(Thread.currentThread(), () -> closeOnAnotherThread(channel));
        assertThrows(ClosedChannelException.class, channel::size);
        assertEquals(0, engine.open(), "ciphers left open");
    }

    /**
     * close() runs while a positioned read waits in the wrapped channel, with a reader it already
     * has: that read completes with the right bytes (its reader was sound), is closed when given
     * back, and the next read fails as closed.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closeDuringAPositionedChannelReadLeavesNoReaderOpen(EngineKind kind) throws IOException {
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        MemorySeekableChannel wrapped = new MemorySeekableChannel(sealed(kind));
        GcmSeekableChannel channel = gcm(engine).open(wrapped);
        wrapped.beforeNextRead(Thread.currentThread(), () -> closeOnAnotherThread(channel));
        byte[] b = new byte[100];
        channel.readFully(20_000, b, 0, b.length);
        assertArrayEquals(Arrays.copyOfRange(PLAIN, 20_000, 20_100), b);
        assertThrows(ClosedChannelException.class, () -> channel.read(0, b, 0, 1));
        assertEquals(0, engine.open(), "ciphers left open");
    }
}
