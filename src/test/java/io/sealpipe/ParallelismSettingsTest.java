package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.gcm.GcmInternals;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.TextLikeData;
import io.sealpipe.snappy.SnappyStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The parallelism default (1, or the {@code sealpipe.parallelism} property) and the builders'
 * {@code executor(...)}: a stream at parallelism 1 hands nothing to any executor, and above 1 it
 * hands its helper tasks to the given executor, with the same bytes whatever runs them.
 */
class ParallelismSettingsTest {
    static final byte[] KEY = new byte[32];
    static final byte[] IV = new byte[16];
    static final byte[] PLAIN = TextLikeData.generate(11, 5 << 20);

    static {
        new Random(3).nextBytes(KEY);
        new Random(4).nextBytes(IV);
    }

    /** Counts the tasks it is given and runs them on two threads of its own. */
    static final class CountingExecutor implements java.util.concurrent.Executor {
        final AtomicInteger tasks = new AtomicInteger();
        final ExecutorService threads = Executors.newFixedThreadPool(2);

        @Override
        public void execute(Runnable task) {
            tasks.incrementAndGet();
            threads.execute(task);
        }
    }

    @AfterEach
    void clearProperty() {
        System.clearProperty(Parallelism.PROPERTY);
    }

    @Test
    void theDefaultIsOneThread() {
        assertEquals(1, GcmStreams.builder().key(KEY).build().parallelism());
        assertEquals(1, CtrStreams.builder().key(KEY).iv(IV).build().parallelism());
        assertEquals(1, SnappyStreams.builder().build().parallelism());
    }

    @Test
    void thePropertyRaisesTheDefaultAndTheBuilderOverridesIt() {
        System.setProperty(Parallelism.PROPERTY, "3");
        assertEquals(3, GcmStreams.builder().key(KEY).build().parallelism());
        assertEquals(3, CtrStreams.builder().key(KEY).iv(IV).build().parallelism());
        assertEquals(3, SnappyStreams.builder().build().parallelism());
        assertEquals(1, GcmStreams.builder().key(KEY).parallelism(1).build().parallelism());
        System.setProperty(Parallelism.PROPERTY, "auto");
        assertEquals(Parallelism.AUTO, GcmStreams.builder().key(KEY).build().parallelism());
    }

    @Test
    void aBadPropertyIsAnErrorThatNamesIt() {
        for (String bad : new String[] {"0", "65", "many", "-1"}) {
            System.setProperty(Parallelism.PROPERTY, bad);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> GcmStreams.builder().key(KEY).build());
            assertTrue(e.getMessage().contains("sealpipe.parallelism=" + bad) && e.getMessage().contains("auto"),
                    e.getMessage());
        }
    }

    @Test
    void atParallelismOneNoTaskIsHandedOut() throws IOException {
        CountingExecutor executor = new CountingExecutor();
        try {
            GcmStreams gcm = GcmStreams.builder().key(KEY).executor(executor).build();
            CtrStreams ctr = CtrStreams.builder().key(KEY).iv(IV).executor(executor).build();
            SnappyStreams snappy = SnappyStreams.builder().executor(executor).build();
            byte[] sealed = write(out -> snappy.compress(gcm.encrypt(out)));
            assertArrayEquals(PLAIN, read(sealed, in -> snappy.decompress(gcm.decrypt(in))));
            byte[] ctrText = write(ctr::encrypt);
            assertArrayEquals(PLAIN, read(ctrText, in -> ctr.decrypt(in)));
            assertEquals(0, executor.tasks.get());
        } finally {
            executor.threads.shutdownNow();
        }
    }

    @Test
    void helperTasksGoToTheApplicationsExecutorWithTheSameBytes() throws IOException {
        GcmStreams sequential = GcmInternals.fixedSalt(GcmStreams.builder().key(KEY), new byte[24]).build();
        byte[] expected = write(out -> SnappyStreams.builder().build().compress(sequential.encrypt(out)));
        CountingExecutor executor = new CountingExecutor();
        try {
            GcmStreams gcm = GcmInternals.fixedSalt(GcmStreams.builder().key(KEY), new byte[24]).parallelism(2)
                    .executor(executor).build();
            SnappyStreams snappy = SnappyStreams.builder().parallelism(2).executor(executor).build();
            byte[] sealed = write(out -> snappy.compress(gcm.encrypt(out)));
            assertArrayEquals(expected, sealed, "the same bytes as one thread");
            int afterWrite = executor.tasks.get();
            assertTrue(afterWrite > 0, "the writer handed tasks to the executor");
            assertArrayEquals(PLAIN, read(sealed, in -> snappy.decompress(gcm.decrypt(in))));
            assertTrue(executor.tasks.get() > afterWrite, "the reader handed tasks to the executor");

            CtrStreams ctr = CtrStreams.builder().key(KEY).iv(IV).parallelism(2).executor(executor).build();
            int beforeCtr = executor.tasks.get();
            byte[] ctrText = write(ctr::encrypt);
            assertArrayEquals(write(CtrStreams.builder().key(KEY).iv(IV).build()::encrypt), ctrText);
            assertTrue(executor.tasks.get() > beforeCtr, "the CTR stream handed tasks to the executor");
        } finally {
            executor.threads.shutdownNow();
        }
    }

    @Test
    void anExecutorThatRejectsEverythingOnlyMeansNoHelp() throws IOException {
        java.util.concurrent.Executor rejecting = task -> {
            throw new RejectedExecutionException("shut down");
        };
        GcmStreams gcm = GcmStreams.builder().key(KEY).parallelism(4).executor(rejecting).build();
        SnappyStreams snappy = SnappyStreams.builder().parallelism(4).executor(rejecting).build();
        byte[] sealed = write(out -> snappy.compress(gcm.encrypt(out)));
        assertArrayEquals(PLAIN, read(sealed, in -> snappy.decompress(gcm.decrypt(in))));
    }

    private static byte[] write(Function<OutputStream, OutputStream> layers) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = layers.apply(sink)) {
            for (int off = 0; off < PLAIN.length; off += 300_000) {
                out.write(PLAIN, off, Math.min(300_000, PLAIN.length - off));
            }
        }
        return sink.toByteArray();
    }

    private static byte[] read(byte[] sealed, Function<InputStream, InputStream> layers) throws IOException {
        try (InputStream in = layers.apply(new ByteArrayInputStream(sealed))) {
            return in.readAllBytes();
        }
    }
}
