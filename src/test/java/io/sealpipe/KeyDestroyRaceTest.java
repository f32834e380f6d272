package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A key destroyed by one thread while another builds from it, or makes a stream with it, never
 * seals anything under a zeroed or half-zeroed key: each of thousands of rounds, its two threads
 * released together by a latch, ends with the message whole under the real key, or with the
 * writer refused ({@code IllegalStateException}, the documented failure of a destroyed instance)
 * and nothing written. Either way the output verifies under none of the keys a torn read gives
 * ({@link KeyRaces#tornKeys}). The outcome of each round depends on the scheduling; the check
 * does not.
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
