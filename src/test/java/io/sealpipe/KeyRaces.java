package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * Races of a writer against the destruction of its key, for {@link KeyDestroyRaceTest} and the
 * sealed file system's test: two tasks released together by one latch and joined, and the keys
 * a read torn by a concurrent zeroing could have seen.
 */
public final class KeyRaces {
    private KeyRaces() {}

    /** How a racing task ended: null, or what it threw. */
    public record Outcome(Throwable failure) {
        @Override
        public String toString() {
            return failure == null ? "succeeded" : "threw " + failure;
        }
    }

    /** A task that may throw anything. */
    @FunctionalInterface
    public interface Task {
        void run() throws Exception;
    }

    /**
     * Runs {@code writer} and {@code destroyer} on the pool's two threads, both waiting on
     * one latch until both are ready, and joins them; returns how {@code writer} ended.
     */
    public static Outcome race(ExecutorService pool, Task writer, Task destroyer) throws Exception {
        return race(pool, writer, destroyer, 0);
    }

    /**
     * The same, with {@code destroyer} starting after {@code spins} calls of
     * {@link Thread#onSpinWait()}: a writer that takes far longer than the destroyer is then
     * caught at every stage, not only at its start. How far each round gets depends on the
     * scheduling; what is checked of it does not.
     */
    public static Outcome race(ExecutorService pool, Task writer, Task destroyer, int spins) throws Exception {
        CountDownLatch ready = new CountDownLatch(2);
        CountDownLatch go = new CountDownLatch(1);
        Future<Outcome> w = pool.submit(() -> {
            ready.countDown();
            go.await();
            try {
                writer.run();
                return new Outcome(null);
            } catch (Exception | AssertionError e) {
                return new Outcome(e);
            }
        });
        Future<Outcome> d = pool.submit(() -> {
            ready.countDown();
            go.await();
            for (int i = 0; i < spins; i++) {
                Thread.onSpinWait();
            }
            destroyer.run();
            return new Outcome(null);
        });
        ready.await();
        go.countDown();
        Outcome destroyed = d.get();
        if (destroyed.failure() != null) {
            throw new AssertionError("destroying failed", destroyed.failure());
        }
        return w.get();
    }

    /**
     * Every key other than {@code key} that a read racing {@code Arrays.fill} could have
     * seen: its first 1..32 bytes zero (the last is the all-zero key).
     */
    public static List<byte[]> tornKeys(byte[] key) {
        List<byte[]> torn = new ArrayList<>();
        for (int zeroed = 1; zeroed <= key.length; zeroed++) {
            byte[] k = key.clone();
            Arrays.fill(k, 0, zeroed, (byte) 0);
            if (!Arrays.equals(k, key) && (torn.isEmpty() || !Arrays.equals(k, torn.get(torn.size() - 1)))) {
                torn.add(k);
            }
        }
        return torn;
    }

    public static int zeroBytes(byte[] key) {
        int n = 0;
        for (byte b : key) {
            n += b == 0 ? 1 : 0;
        }
        return n;
    }

    /** The plaintext of {@code message} under {@code key} and {@code context}; throws if it does not verify. */
    public static byte[] open(byte[] key, byte[] message, byte[] context) throws IOException {
        GcmStreams gcm = GcmStreams.builder().key(key).context(context).build();
        try (InputStream in = gcm.decrypt(new ByteArrayInputStream(message))) {
            return in.readAllBytes();
        } finally {
            gcm.destroy();
        }
    }

    /** Whether {@code message} verifies as a whole under {@code key} and {@code context}. */
    public static boolean opens(byte[] key, byte[] message, byte[] context) {
        try {
            open(key, message, context);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The writer threw IllegalStateException (a destroyed key) before writing any byte. */
    public static void assertRefusedBeforeWriting(int round, Outcome writer, byte[] written) {
        if (!(writer.failure() instanceof IllegalStateException)) {
            throw new AssertionError("round " + round + ": the writer " + writer, writer.failure());
        }
        assertTrue(writer.failure().getMessage().contains("destroyed"), writer.failure().getMessage());
        assertEquals(0, written.length, "round " + round + ": bytes written by a refused writer");
    }
}
