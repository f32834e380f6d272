package io.sealpipe.gcm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import javax.crypto.ShortBufferException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * {@link GcmSealer} and {@link GcmOpener}, the push-style forms of the GCM streams: the bytes of
 * {@link GcmOutputStream} for any split of the input into calls, heap or direct; each call
 * writing exactly what its {@code ...OutputSize} said; a call without room changing nothing; and
 * the opener holding back the last chunk and failing every damaged message.
 */
class GcmSealerOpenerTest {
    private static final int CHUNK = Cobblestone.CHUNK_SIZE;
    private static final int SEALED = Cobblestone.SEALED_CHUNK_SIZE;
    private static final int[] SIZES = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 5 * CHUNK + 77, 300_000};

    static java.util.stream.Stream<EngineKind> engines() {
        return TestEngines.kinds().filter(k -> k.supports(Operation.GCM_SEAL));
    }

    private static GcmStreams streams(EngineKind kind, byte[] salt) {
        GcmStreams.Builder b = GcmStreams.builder().key(new byte[16]).context(new byte[] {7}).parallelism(1)
                .engine(TestEngines.engine(kind));
        return b.fixedSaltForTests(salt).build();
    }

    private static byte[] bytes(long seed, int n) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    private static ByteBuffer buffer(int capacity, boolean direct) {
        return direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
    }

    /** Feeds {@code in} in random pieces, checking each call's size against its prediction. */
    private static byte[] seal(GcmSealer sealer, byte[] in, SplittableRandom random, boolean direct) throws Exception {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        int at = 0;
        while (true) {
            int n = Math.min(in.length - at, random.nextInt(3) == 0 ? random.nextInt(100) : random.nextInt(3 * CHUNK));
            boolean last = at + n == in.length && random.nextBoolean();
            ByteBuffer src = buffer(n, direct).put(in, at, n).flip();
            int expected = last ? sealer.finishOutputSize(n) : sealer.updateOutputSize(n);
            ByteBuffer dst = buffer(expected, direct);
            int wrote = last ? sealer.finish(src, dst) : sealer.update(src, dst);
            assertEquals(expected, wrote, "the predicted size");
            assertEquals(expected, dst.position());
            assertEquals(n, src.position(), "all input taken");
            all.write(toArray(dst.flip()));
            at += n;
            if (last) {
                return all.toByteArray();
            }
        }
    }

    private static byte[] open(GcmOpener opener, byte[] in, SplittableRandom random, boolean direct) throws Exception {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        int at = 0;
        while (true) {
            int n = Math.min(in.length - at, random.nextInt(3) == 0 ? random.nextInt(100) : random.nextInt(3 * SEALED));
            boolean last = at + n == in.length && random.nextBoolean();
            ByteBuffer src = buffer(n, direct).put(in, at, n).flip();
            int expected = last ? opener.finishOutputSize(n) : opener.updateOutputSize(n);
            ByteBuffer dst = buffer(expected, direct);
            int wrote = last ? opener.finish(src, dst) : opener.update(src, dst);
            assertEquals(expected, wrote, "the predicted size");
            all.write(toArray(dst.flip()));
            at += n;
            if (last) {
                return all.toByteArray();
            }
        }
    }

    private static byte[] toArray(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    @ParameterizedTest
    @MethodSource("engines")
    void anySplitGivesTheOutputStreamsBytesAndReadsBack(EngineKind kind) throws Exception {
        byte[] salt = bytes(1, Cobblestone.SALT_LENGTH);
        GcmStreams streams = streams(kind, salt);
        SplittableRandom random = new SplittableRandom(kind.ordinal());
        for (int size : SIZES) {
            byte[] plain = bytes(size, size);
            ByteArrayOutputStream reference = new ByteArrayOutputStream();
            try (OutputStream out = streams.encrypt(reference)) {
                out.write(plain);
            }
            for (boolean direct : new boolean[] {false, true}) {
                byte[] sealed;
                try (GcmSealer sealer = streams.sealer()) {
                    sealed = seal(sealer, plain, random, direct);
                    assertTrue(sealer.isFinished());
                }
                assertArrayEquals(reference.toByteArray(), sealed, size + " bytes, direct " + direct);
                try (GcmOpener opener = streams.opener()) {
                    assertArrayEquals(plain, open(opener, sealed, random, direct), size + " bytes, direct " + direct);
                    assertTrue(opener.isFinished());
                }
            }
            try (InputStream in = streams.decrypt(new ByteArrayInputStream(reference.toByteArray()))) {
                assertArrayEquals(plain, in.readAllBytes());
            }
        }
    }

    @Test
    void aCallWithoutRoomChangesNothing() throws Exception {
        GcmStreams streams = GcmStreams.builder().key(new byte[32]).build();
        byte[] plain = bytes(2, 2 * CHUNK + 5);
        try (GcmSealer sealer = streams.sealer()) {
            ByteBuffer src = ByteBuffer.wrap(plain);
            ByteBuffer small = ByteBuffer.allocate(sealer.finishOutputSize(plain.length) - 1);
            assertThrows(ShortBufferException.class, () -> sealer.finish(src, small));
            assertEquals(0, src.position());
            assertEquals(0, small.position());
            ByteBuffer out = ByteBuffer.allocate(sealer.finishOutputSize(plain.length));
            sealer.finish(src, out);
            byte[] sealed = Arrays.copyOf(out.array(), out.position());
            try (GcmOpener opener = streams.opener()) {
                ByteBuffer in = ByteBuffer.wrap(sealed);
                ByteBuffer tight = ByteBuffer.allocate(opener.finishOutputSize(sealed.length) - 1);
                assertThrows(ShortBufferException.class, () -> opener.finish(in, tight));
                assertEquals(0, in.position());
                ByteBuffer back = ByteBuffer.allocate(plain.length);
                assertEquals(plain.length, opener.finish(in, back));
                assertArrayEquals(plain, back.array());
            }
        }
    }

    /** The held chunk: released only when the next verified; a failure releases nothing more, and stays. */
    @Test
    void theOpenerHoldsTheLastChunkBackAndFailsEveryDamage() throws Exception {
        GcmStreams streams = GcmStreams.builder().key(new byte[16]).build();
        byte[] plain = bytes(3, 3 * CHUNK);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = streams.encrypt(sink)) {
            out.write(plain);
        }
        byte[] sealed = sink.toByteArray();
        int header = Cobblestone.HEADER_LENGTH;
        try (GcmOpener opener = streams.opener()) {
            ByteBuffer out = ByteBuffer.allocate(plain.length);
            assertEquals(2 * CHUNK, opener.update(ByteBuffer.wrap(sealed, 0, header + 3 * SEALED), out),
                    "chunks 0 and 1 released, chunk 2 held");
            assertEquals(CHUNK, opener.finish(ByteBuffer.wrap(sealed, header + 3 * SEALED, 16), out),
                    "chunk 2 released after the final chunk");
            assertArrayEquals(plain, out.array());
        }
        byte[] flipped = sealed.clone();
        flipped[header + 2 * SEALED + 1] ^= 1;
        byte[] swapped = sealed.clone();
        System.arraycopy(sealed, header, swapped, header + SEALED, SEALED);
        System.arraycopy(sealed, header + SEALED, swapped, header, SEALED);
        byte[][] damaged = {flipped, swapped, Arrays.copyOf(sealed, header + 3 * SEALED),
            Arrays.copyOf(sealed, sealed.length + 1), Arrays.copyOf(sealed, sealed.length - 1), Arrays.copyOf(sealed, 50)};
        // Chunks 0 and 1 come in one batch, chunk 2 in the next: what each damage lets out first.
        int[] released = {CHUNK, 0, 2 * CHUNK, 2 * CHUNK, 2 * CHUNK, 0};
        String[] names = {"chunk 2 flipped", "chunks 0 and 1 swapped", "final chunk cut off", "a byte appended",
            "the last byte cut", "cut in the header"};
        for (int i = 0; i < damaged.length; i++) {
            byte[] d = damaged[i];
            try (GcmOpener opener = streams.opener()) {
                ByteBuffer out = ByteBuffer.allocate(plain.length + CHUNK);
                StreamAuthenticationException e = assertThrows(StreamAuthenticationException.class, () -> {
                    opener.update(ByteBuffer.wrap(d), out);
                    opener.finish(ByteBuffer.allocate(0), out);
                }, names[i]);
                assertEquals(released[i], out.position(), names[i] + ": released before " + e.getMessage());
                assertArrayEquals(Arrays.copyOf(plain, out.position()), Arrays.copyOf(out.array(), out.position()),
                        "what was released is authentic");
                assertThrows(StreamAuthenticationException.class, () -> opener.finish(ByteBuffer.allocate(0), out),
                        "and fails again");
            }
        }
    }
}
