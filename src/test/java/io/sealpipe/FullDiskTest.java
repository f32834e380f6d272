package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.snappy.PipelineFailureTest;
import io.sealpipe.snappy.PipelineRoundTripTest.Pipeline;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 29's full disk: each stream writes {@value #SIZE} bytes of random data to a file on a
 * {@link Tmpfs} of {@value #DISK} bytes. The write fails with the kernel's "No space left on
 * device" as an {@code IOException}; {@code abort()} and {@code close()} after it throw nothing
 * else and do not hang; what a GCM stream left on the disk is rejected by every reader; the disk
 * is writable again once that file is deleted.
 */
class FullDiskTest {
    private static final int DISK = 2 << 20;
    private static final int SIZE = 6 << 20;
    private static final byte[] PLAIN = new byte[SIZE];

    static {
        new SplittableRandom(29).nextBytes(PLAIN);
    }

    static Stream<Arguments> cases() {
        return Stream.of(Pipeline.Mode.values()).flatMap(mode -> Stream.of(false, true).flatMap(compress ->
                Stream.of(1, 2).flatMap(parallelism -> Stream.of(false, true)
                        .map(abortFirst -> Arguments.of(mode, compress, parallelism, abortFirst)))));
    }

    @ParameterizedTest(name = "{0}, compress {1}, parallelism {2}, abort first {3}")
    @MethodSource("cases")
    void aStreamOnAFullDisk(Pipeline.Mode mode, boolean compress, int parallelism, boolean abortFirst,
            @TempDir Path parent) throws Exception {
        Pipeline p = Pipeline.of(mode, compress, parallelism);
        try (Tmpfs disk = Tmpfs.mount(parent, DISK)) {
            Path file = disk.dir.resolve("out");
            OutputStream out = p.output(Files.newOutputStream(file));
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                IOException e = assertThrows(IOException.class, () -> {
                    for (int off = 0; off < SIZE; off += 100_000) {
                        out.write(PLAIN, off, Math.min(100_000, SIZE - off));
                    }
                    out.close();
                });
                Tmpfs.assertNoSpace(e);
                if (abortFirst) {
                    ((Abortable) out).abort();
                }
                closeAgain(out, e);
            });
            if (mode == Pipeline.Mode.GCM) {
                assertRejected(p, Files.readAllBytes(file));
            }
            stillWritableOnceDeleted(disk.dir, file);
        }
    }

    @Test
    void aGcmChannelOnAFullDisk(@TempDir Path parent) throws Exception {
        Pipeline p = Pipeline.of(Pipeline.Mode.GCM, false, 2);
        try (Tmpfs disk = Tmpfs.mount(parent, DISK)) {
            Path file = disk.dir.resolve("out");
            GcmOutputStream out = p.gcm().encrypt(FileChannel.open(file, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE));
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                IOException e = assertThrows(IOException.class, () -> {
                    for (int off = 0; off < SIZE; off += 100_000) {
                        out.write(ByteBuffer.wrap(PLAIN, off, Math.min(100_000, SIZE - off)));
                    }
                    out.close();
                });
                Tmpfs.assertNoSpace(e);
                out.abort();
                closeAgain(out, e);
            });
            assertRejected(p, Files.readAllBytes(file));
            stillWritableOnceDeleted(disk.dir, file);
        }
    }

    @AfterAll
    static void noWorkerOutlivesItsStreams() throws InterruptedException {
        PipelineFailureTest.assertWorkersEnd();
    }

    /** A close after the failure returns, or throws that failure (again, or as its cause): nothing else. */
    private static void closeAgain(OutputStream out, IOException failure) {
        try {
            out.close();
        } catch (IOException again) {
            // that failure again, or the stream's "not finished" with it as the cause: nothing else
            assertSame(failure, again == failure ? again : again.getCause(), "a close after the failure: " + again);
        }
        PipelineFailureTest.assertWorkersIdle();
    }

    private static void assertRejected(Pipeline p, byte[] left) {
        byte[] back;
        try {
            back = p.decrypt(left, 1 << 16);
        } catch (IOException rejected) {
            return;
        }
        fail("a GCM message cut short by a full disk verified: " + back.length + " bytes");
    }

    /** The failed file is all the disk holds: deleted, the disk takes a small file again. */
    private static void stillWritableOnceDeleted(Path dir, Path file) throws IOException {
        Files.deleteIfExists(file);
        Path probe = dir.resolve("probe");
        Files.write(probe, new byte[DISK / 2]);
        assertEquals(DISK / 2, Files.size(probe));
        Files.delete(probe);
    }
}
