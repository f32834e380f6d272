package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.snappy.PipelineFailureTest;
import io.sealpipe.snappy.PipelineRoundTripTest.Pipeline;
import io.sealpipe.snappy.PipelineRoundTripTest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
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
 * else and do not hang; what a GCM stream left on the disk (the file is made before the first
 * write, so there always is one) is rejected by every reader ({@link #assertRejected}); the disk
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

    /**
     * Every reader rejects what a failed GCM stream left ({@link #readers}).
     */
    private static void assertRejected(Pipeline p, byte[] left) {
        EveryReader.mustReject(readers(p, left), (reader, back) -> reader + " read a GCM message cut short by a full disk ("
                + left.length + " bytes stored): " + back.length + " bytes");
    }

    /**
     * The positive control of {@link #assertRejected}: on a whole message, every one of its
     * readers gives the plaintext back, so a reader that rejects it there is a reader that reads.
     */
    @Test
    void everyReaderOfTheCheckReadsAWholeMessage() {
        Pipeline p = Pipeline.of(Pipeline.Mode.GCM, false, 2);
        byte[] plain = Arrays.copyOf(PLAIN, (1 << 20) + 3 * 16384 + 5); // past the first MiB, where parallel reading starts
        byte[] whole;
        try {
            whole = p.encrypt(plain, PipelineRoundTripTest.Writes.ONE_WRITE);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        Map<String, EveryReader.Read<byte[]>> readers = readers(p, whole);
        assertEquals(11, readers.size(), readers.keySet().toString());
        readers.forEach((reader, read) -> {
            try {
                byte[] back = read.read();
                assertArrayEquals(reader.contains("last byte") ? new byte[] {plain[plain.length - 1]} : plain, back, reader);
            } catch (IOException e) {
                throw new AssertionError(reader + " rejected a whole message", e);
            }
        });
    }

    /**
     * Every way to read {@code stored}: the pipeline's own stream (through Snappy when it
     * compresses), and on the GCM layer a stream at parallelism 1 and 2, a channel, a buffer, and
     * a seekable channel read to its end and at its last byte.
     */
    private static Map<String, EveryReader.Read<byte[]>> readers(Pipeline p, byte[] stored) {
        Map<String, EveryReader.Read<byte[]>> readers = new LinkedHashMap<>();
        readers.put("the pipeline's stream", () -> p.decrypt(stored, 1 << 16));
        for (int parallelism : new int[] {1, 2}) {
            GcmStreams gcm = Pipeline.of(Pipeline.Mode.GCM, false, parallelism).gcm();
            String at = " at parallelism " + parallelism;
            readers.put("a stream" + at, () -> readAll(gcm.decrypt(new ByteArrayInputStream(stored))));
            readers.put("a channel" + at, () -> readAll(gcm.decrypt(Channels.newChannel(new ByteArrayInputStream(stored)))));
            readers.put("a buffer" + at, () -> readAll(gcm.decrypt(ByteBuffer.wrap(stored))));
            readers.put("a seekable channel read to its end" + at, () -> {
                try (GcmSeekableChannel channel = gcm.open(new MemorySeekableChannel(stored))) {
                    ByteBuffer all = ByteBuffer.allocate((int) channel.size());
                    while (all.hasRemaining() && channel.read(all) >= 0) {
                        // to the end of what the channel claims
                    }
                    return all.array();
                }
            });
            readers.put("a seekable channel read at its last byte" + at, () -> {
                try (GcmSeekableChannel channel = gcm.open(new MemorySeekableChannel(stored))) {
                    ByteBuffer last = ByteBuffer.allocate(1);
                    channel.position(Math.max(0, channel.size() - 1)).read(last);
                    return last.array();
                }
            });
        }
        return readers;
    }

    private static byte[] readAll(InputStream in) throws IOException {
        try (in) {
            return in.readAllBytes();
        }
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
