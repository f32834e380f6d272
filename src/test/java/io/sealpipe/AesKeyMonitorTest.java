package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.KeyAccess;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * An {@link AesKey} is a public object, so its monitor is the caller's to take: code holding
 * {@code synchronized (key)} must block nothing of the key's. Here one thread takes the monitor
 * and keeps it (a latch, released only once the test has its answer) while another builds
 * streams from the key, seals and opens a message with them, borrows and copies the bytes, and
 * destroys the key. The second thread must end while the monitor is still held. The join is
 * bounded only so that a block fails the test instead of hanging it: the work takes
 * milliseconds, and no outcome depends on how the threads are scheduled. The same holds for the
 * class object of {@link KeyAccess}, whose registration runs when {@code AesKey} initialises.
 */
class AesKeyMonitorTest {
    /** Only a thread that is really blocked runs this long (the work takes milliseconds). */
    private static final long DEADLOCK_BOUND_MILLIS = 60_000;

    @FunctionalInterface
    private interface Work {
        void run() throws Exception;
    }

    /**
     * Runs {@code work} in a thread of its own while another thread holds {@code monitor}, and
     * fails if the work does not end while the monitor is held, or if it throws.
     */
    private static void runWhileHeld(Object monitor, Work work) throws InterruptedException {
        String name = String.valueOf(monitor); // before the work, which may destroy a key
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (monitor) {
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "monitor-holder");
        holder.start();
        held.await();
        OtherThread userThread = OtherThread.start("key-user", "the key's use while the monitor was held", work::run);
        Thread user = userThread.thread();
        user.join(DEADLOCK_BOUND_MILLIS);
        boolean blocked = user.isAlive();
        String where = Arrays.stream(user.getStackTrace()).map(e -> "\n\tat " + e).collect(Collectors.joining());
        release.countDown(); // only now does the holder give the monitor back
        holder.join();
        user.join();
        assertFalse(blocked, "the key's user was blocked while another thread held " + name + "'s monitor:"
                + where);
        userThread.join();
    }

    @Test
    void theKeyIsUsedAndDestroyedWhileACallerHoldsItsMonitor() throws Exception {
        byte[] bytes = new byte[32];
        new Random(41).nextBytes(bytes);
        byte[] plain = new byte[20_000]; // a full chunk and a final one
        new Random(42).nextBytes(plain);
        AesKey key = AesKey.copyOf(bytes);
        runWhileHeld(key, () -> {
            GcmStreams gcm = GcmStreams.builder().key(key).build();
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            try (OutputStream out = gcm.encrypt(sink)) {
                out.write(plain);
            }
            try (InputStream in = gcm.decrypt(new ByteArrayInputStream(sink.toByteArray()))) {
                assertArrayEquals(plain, in.readAllBytes());
            }
            gcm.destroy();
            assertArrayEquals(bytes, KeyAccess.withBytes(key, byte[]::clone));
            AesKey copy = KeyAccess.copy(key);
            key.destroy();
            assertTrue(key.isDestroyed());
            assertThrows(IllegalStateException.class, () -> KeyAccess.withBytes(key, byte[]::clone));
            assertThrows(IllegalStateException.class, () -> GcmStreams.builder().key(key).build());
            assertArrayEquals(bytes, KeyAccess.withBytes(copy, byte[]::clone), "the copy is its own");
            copy.destroy();
        });
    }

    /**
     * AesKey registers its lender with KeyAccess when its class initialises, that is at a key's
     * first use. A class of its own, from a class loader of its own, so that this runs here
     * whatever other tests have initialised in this JVM.
     */
    @Test
    void aKeysFirstUseRegistersWhileACallerHoldsKeyAccessMonitor() throws Exception {
        URL classes = AesKey.class.getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader fresh = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
            Class<?> keyAccess = Class.forName(KeyAccess.class.getName(), true, fresh);
            runWhileHeld(keyAccess, () -> {
                Class<?> aesKey = Class.forName(AesKey.class.getName(), true, fresh);
                Object key = aesKey.getMethod("copyOf", byte[].class).invoke(null, (Object) new byte[16]);
                assertNotNull(keyAccess.getMethod("copy", aesKey).invoke(null, key));
            });
        }
    }
}
