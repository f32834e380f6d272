package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A key destroyed by one thread while another builds from it, or makes a stream with it, never
 * seals anything under a zeroed or half-zeroed key.
 *
 * <p>First each outcome forced, on every engine: the destroy done before the writer starts (the
 * writer is refused with {@code IllegalStateException}, the documented failure of a destroyed
 * instance, and writes nothing), done on another thread from inside the engine's cipher creation
 * (the key array handed over, not read yet), and done between two writes: in the last two the
 * message is whole under the real key. Then thousands of free rounds, two threads released
 * together by a latch, for a destroy that meets the copy of the key itself: each round ends with
 * one of those outcomes, and its output verifies under none of the keys a torn read gives
 * ({@link KeyRaces#tornKeys}). How the free rounds split depends on the scheduling; the forced
 * tests make sure each outcome is seen, and the checks depend on neither.
 */
@Timeout(300) // a safety net against a deadlocked fix only: no test waits for time
class KeyDestroyRaceTest {
    private static final int ROUNDS = 6_000;
    private static final byte[] PLAIN = new byte[20_000]; // a full chunk and a final one
    private static ExecutorService pool;

    @BeforeAll
    static void startThreads() {
        new Random(26).nextBytes(PLAIN);
        pool = Executors.newFixedThreadPool(2);
    }

    @AfterAll
    static void stopThreads() {
        pool.shutdownNow();
    }

    private static byte[] key(int round) {
        byte[] key = new byte[32];
        new Random(round).nextBytes(key);
        return key;
    }

    /** Where a forced destroy lands. */
    enum Moment {
        /** Done before the writer builds or makes its stream: the writer is refused. */
        BEFORE,
        /** Done on another thread inside the engine's cipher creation, the key array handed over. */
        IN_CIPHER_CREATION,
        /** Done on another thread between the writer's first and second write. */
        MID_WRITE
    }

    static Stream<Arguments> momentsOnEveryEngine() {
        return withMoments(TestEngines.kinds());
    }

    static Stream<Arguments> momentsOnEveryCtrEngine() {
        return withMoments(TestEngines.ctrKinds());
    }

    private static Stream<Arguments> withMoments(Stream<EngineKind> kinds) {
        return kinds.flatMap(kind -> Stream.of(Moment.values()).map(moment -> Arguments.of(kind, moment)));
    }

    /** GcmStreams.destroy() at each moment of a writer's encrypt and write. */
    @ParameterizedTest(name = "{0}, destroy {1}")
    @MethodSource("momentsOnEveryEngine")
    void gcmStreamsDestroyedAtEachMoment(EngineKind kind, Moment moment) throws Exception {
        byte[] key = key(-1);
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        GcmStreams gcm = GcmStreams.builder().key(key).engine(engine).build();
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        KeyRaces.Outcome writer = forced(moment, engine, gcm::destroy, () -> {
            try (OutputStream out = gcm.encrypt(sink)) {
                writeInTwo(out, moment, gcm::destroy);
            }
        });
        assertEquals(moment != Moment.BEFORE, checkGcm(-1, key, sink.toByteArray(), writer) == 1, "the writer " + writer);
    }

    /** The caller's AesKey destroyed at each moment of a builder's build(), encrypt and write. */
    @ParameterizedTest(name = "{0}, destroy {1}")
    @MethodSource("momentsOnEveryEngine")
    void callersKeyDestroyedAtEachMoment(EngineKind kind, Moment moment) throws Exception {
        byte[] key = key(-2);
        AesKey shared = AesKey.copyOf(key);
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        GcmStreams.Builder builder = GcmStreams.builder().key(shared).engine(engine);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        KeyRaces.Outcome writer = forced(moment, engine, shared::destroy, () -> {
            GcmStreams gcm = builder.build();
            try (OutputStream out = gcm.encrypt(sink)) {
                writeInTwo(out, moment, shared::destroy);
            } finally {
                gcm.destroy();
            }
        });
        assertTrue(shared.isDestroyed());
        assertEquals(moment != Moment.BEFORE, checkGcm(-2, key, sink.toByteArray(), writer) == 1, "the writer " + writer);
    }

    /** CtrStreams.destroy() at each moment of a writer's encrypt and write. */
    @ParameterizedTest(name = "{0}, destroy {1}")
    @MethodSource("momentsOnEveryCtrEngine")
    void ctrStreamsDestroyedAtEachMoment(EngineKind kind, Moment moment) throws Exception {
        byte[] key = key(-3);
        byte[] iv = new byte[16];
        HookedEngine engine = new HookedEngine(TestEngines.engine(kind));
        CtrStreams ctr = CtrStreams.builder().key(key).iv(iv).engine(engine).build();
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        KeyRaces.Outcome writer = forced(moment, engine, ctr::destroy, () -> {
            try (OutputStream out = ctr.encrypt(sink)) {
                writeInTwo(out, moment, ctr::destroy);
            }
        });
        if (moment == Moment.BEFORE) {
            KeyRaces.assertRefusedBeforeWriting(-3, writer, sink.toByteArray());
        } else {
            assertNull(writer.failure(), "the writer " + writer);
            assertArrayEquals(CtrFixtures.referenceCtr(key, iv, 0, PLAIN), sink.toByteArray(), "CTR output not under the real key");
        }
    }

    /**
     * Runs {@code writer} on this thread with {@code destroy} placed at {@code moment}: before it,
     * or inside the engine's next cipher creation on another thread, joined; {@link Moment#MID_WRITE}
     * is placed by the writer itself ({@link #writeInTwo}).
     */
    private static KeyRaces.Outcome forced(Moment moment, HookedEngine engine, Runnable destroy, KeyRaces.Task writer) {
        if (moment == Moment.BEFORE) {
            destroy.run();
        } else if (moment == Moment.IN_CIPHER_CREATION) {
            engine.beforeNextCipher(Thread.currentThread(), () -> OtherThread.run("destroyer", "the destroy", destroy::run));
        }
        try {
            writer.run();
            return new KeyRaces.Outcome(null);
        } catch (Exception e) {
            return new KeyRaces.Outcome(e);
        }
    }

    /** Writes {@link #PLAIN} in two, with {@code destroy} done on another thread between the two at {@link Moment#MID_WRITE}. */
    private static void writeInTwo(OutputStream out, Moment moment, Runnable destroy) throws IOException {
        out.write(PLAIN, 0, PLAIN.length / 2);
        if (moment == Moment.MID_WRITE) {
            OtherThread.run("destroyer", "the destroy", destroy::run);
        }
        out.write(PLAIN, PLAIN.length / 2, PLAIN.length - PLAIN.length / 2);
    }

    /** Runs {@code step} on a new thread and waits for it to end. */
    /** GcmStreams.encrypt and the writing, against GcmStreams.destroy(). */
    @Test
    void gcmStreamsDestroyedWhileAStreamIsMade() throws Exception {
        int sealed = 0;
        for (int round = 0; round < ROUNDS; round++) {
            byte[] key = key(round);
            GcmStreams gcm = GcmStreams.builder().key(key).build();
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            KeyRaces.Outcome writer = KeyRaces.race(pool, () -> {
                try (OutputStream out = gcm.encrypt(sink)) {
                    out.write(PLAIN);
                }
            }, gcm::destroy);
            sealed += checkGcm(round, key, sink.toByteArray(), writer);
        }
        System.out.printf("GcmStreams.destroy race: %d of %d rounds sealed before the destroy%n", sealed, ROUNDS);
    }

    /** A builder's build() from the caller's AesKey, against that key's destroy(). */
    @Test
    void callersKeyDestroyedWhileABuilderBuilds() throws Exception {
        int sealed = 0;
        for (int round = 0; round < ROUNDS; round++) {
            byte[] key = key(round);
            AesKey shared = AesKey.copyOf(key);
            GcmStreams.Builder builder = GcmStreams.builder().key(shared);
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            KeyRaces.Outcome writer = KeyRaces.race(pool, () -> {
                GcmStreams gcm = builder.build();
                try (OutputStream out = gcm.encrypt(sink)) {
                    out.write(PLAIN);
                } finally {
                    gcm.destroy();
                }
            }, shared::destroy);
            sealed += checkGcm(round, key, sink.toByteArray(), writer);
        }
        System.out.printf("AesKey.destroy race with build(): %d of %d rounds sealed%n", sealed, ROUNDS);
    }

    /** CtrStreams.encrypt against CtrStreams.destroy(): CTR has no tag, so compare the bytes. */
    @Test
    void ctrStreamsDestroyedWhileAStreamIsMade() throws Exception {
        byte[] iv = new byte[16];
        int encrypted = 0;
        for (int round = 0; round < ROUNDS; round++) {
            byte[] key = key(round);
            CtrStreams ctr = CtrStreams.builder().key(key).iv(iv).build();
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            KeyRaces.Outcome writer = KeyRaces.race(pool, () -> {
                try (OutputStream out = ctr.encrypt(sink)) {
                    out.write(PLAIN);
                }
            }, ctr::destroy);
            if (writer.failure() == null) {
                assertArrayEquals(CtrFixtures.referenceCtr(key, iv, 0, PLAIN), sink.toByteArray(),
                        "round " + round + ": CTR output not under the real key");
                encrypted++;
            } else {
                KeyRaces.assertRefusedBeforeWriting(round, writer, sink.toByteArray());
            }
        }
        System.out.printf("CtrStreams.destroy race: %d of %d rounds encrypted%n", encrypted, ROUNDS);
    }

    /** 1 if the message verifies under the real key with all of {@link #PLAIN}, else 0 after the checks. */
    private static int checkGcm(int round, byte[] key, byte[] written, KeyRaces.Outcome writer) throws IOException {
        for (byte[] torn : KeyRaces.tornKeys(key)) {
            if (KeyRaces.opens(torn, written, new byte[0])) {
                fail("round " + round + ": the message verifies under a zeroed or half-zeroed key ("
                        + KeyRaces.zeroBytes(torn) + " of 32 bytes zero); the writer " + writer);
            }
        }
        if (writer.failure() == null) {
            assertArrayEquals(PLAIN, KeyRaces.open(key, written, new byte[0]), "round " + round);
            return 1;
        }
        KeyRaces.assertRefusedBeforeWriting(round, writer, written);
        return 0;
    }
}
