package io.sealpipe.iceberg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.hadoop.SealedFixture;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.FileRange;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link SealedFileIO} at its edges: short objects, use after close, missing capabilities, huge ranges. */
class SealedFileIOEdgeTest {
    @TempDir
    Path dir;
    private URI keystore;
    private String storeName;
    private MemoryFileIO.Store store;

    @BeforeEach
    void setUp() throws IOException {
        keystore = URI.create("jceks://file" + dir.resolve("keys.jceks").toAbsolutePath());
        SealedFixture.createKey(keystore, "data", 256);
        storeName = "e" + System.nanoTime();
        store = MemoryFileIO.store(storeName);
    }

    private Map<String, String> properties(String impl) {
        Map<String, String> p = new HashMap<>();
        p.put(SealedFileIO.IO_IMPL, impl);
        p.put(MemoryFileIO.STORE, storeName);
        p.put(SealedFileSystem.KEY_PROVIDER_PATH, keystore.toString());
        p.put(SealedFileSystem.KEY_NAME, "data");
        p.put(SealedFileSystem.KEY_MODE, "direct");
        return p;
    }

    private SealedFileIO io() {
        return io(properties(MemoryFileIO.class.getName()));
    }

    private static SealedFileIO io(Map<String, String> properties) {
        return SealedFileIOTest.io(properties);
    }

    private static byte[] data(int length, long seed) {
        return SealedFileIOTest.data(length, seed);
    }

    private static void write(SealedFileIO io, String path, byte[] data) throws IOException {
        try (PositionOutputStream out = io.newOutputFile(path).createOrOverwrite()) {
            out.write(data);
        }
    }

    /** An object shorter than a header, opened with no length: every read fails naming the file and the cause. */
    @ParameterizedTest
    @ValueSource(ints = {0, 10})
    void anObjectShorterThanAHeaderFailsEveryReadClearly(int size) throws Exception {
        store.objects.put("mem://t/short", new byte[size]);
        try (SealedFileIO io = io()) {
            List<IOException> failures = new ArrayList<>();
            try (SeekableInputStream in = io.newInputFile("mem://t/short").newStream()) {
                failures.add(assertThrows(IOException.class, () -> ((RangeReadable) in).readFully(0, new byte[1], 0, 1)));
            }
            try (SeekableInputStream in = io.newInputFile("mem://t/short").newStream()) {
                failures.add(assertThrows(IOException.class, () -> ((RangeReadable) in).readTail(new byte[8], 0, 8)));
            }
            try (SeekableInputStream in = io.newInputFile("mem://t/short").newStream()) {
                List<FileRange> ranges = List.of(new FileRange(new CompletableFuture<>(), 0, 1));
                ((RangeReadable) in).readVectored(ranges, ByteBuffer::allocate);
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> ranges.get(0).byteBuffer().get(10, TimeUnit.SECONDS));
                failures.add(assertInstanceOf(IOException.class, e.getCause()));
            }
            for (IOException e : failures) {
                assertTrue(e.getMessage().contains("mem://t/short") && e.getMessage().contains("shorter than"), e.toString());
            }
        }
    }

    /** A known length, and an object cut below the header: the message names the file and the likely cause. */
    @Test
    void aKnownLengthOverAnObjectCutBelowTheHeaderNamesTheFileAndTheCause() throws Exception {
        byte[] data = data(1000, 1);
        try (SealedFileIO io = io()) {
            write(io, "mem://t/a", data);
            store.objects.put("mem://t/cut", java.util.Arrays.copyOf(store.objects.get("mem://t/a"), 20));
            try (SeekableInputStream in = io.newInputFile("mem://t/cut", 3 * 16384 * 10).newStream()) {
                IOException e = assertThrows(IOException.class, () -> in.read(new byte[10]));
                assertTrue(e.getMessage().contains("mem://t/cut") && e.getMessage().contains("cut short"), e.toString());
            }
        }
    }

    /** Any failure of a vectored read completes every range's future (a RuntimeException too), and a huge range does not overflow. */
    @Test
    void aHugeVectoredRangeFailsItsFutureAndNeverOverflows() throws Exception {
        byte[] data = data(1000, 2);
        try (SealedFileIO io = io()) {
            write(io, "mem://t/a", data);
            store.objects.put("mem://t/huge", store.objects.get("mem://t/a"));
            try (SeekableInputStream in = io.newInputFile("mem://t/huge", 3L << 30).newStream()) {
                List<FileRange> ranges = List.of(new FileRange(new CompletableFuture<>(), 0, Integer.MAX_VALUE - 100),
                        new FileRange(new CompletableFuture<>(), (3L << 30) - 10, 5));
                ((RangeReadable) in).readVectored(ranges, ByteBuffer::allocate);
                for (FileRange r : ranges) {
                    ExecutionException e = assertThrows(ExecutionException.class, () -> r.byteBuffer().get(10, TimeUnit.SECONDS));
                    assertInstanceOf(IOException.class, e.getCause(), e.getCause().toString());
                }
            }
        }
    }

    /** After close, no new file: it fails saying the FileIO was closed (and reloads no key). */
    @Test
    void useAfterCloseFailsClearly() throws Exception {
        SealedFileIO io = io();
        OutputFile before = io.newOutputFile("mem://t/o");
        io.close();
        io.close(); // idempotent
        for (org.junit.jupiter.api.function.Executable use : List.<org.junit.jupiter.api.function.Executable>of(
                () -> io.newInputFile("mem://t/a"), () -> io.newInputFile("mem://t/a", 10),
                () -> io.newOutputFile("mem://t/a"), io::delegate)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, use);
            assertTrue(e.getMessage().contains("SealedFileIO was closed"), e.getMessage());
        }
        RuntimeException e = assertThrows(RuntimeException.class, before::createOrOverwrite);
        assertTrue(e.getMessage().contains("SealedFileIO") && e.getMessage().contains("closed")
                && !e.getMessage().contains("file system"), e.getMessage());
        assertFalse(store.objects.containsKey("mem://t/o"), "nothing stored");
    }

    /**
     * A FileIO nobody closes (a deserialized copy on an executor): once it, and every file and
     * stream it made, is unreachable, the Cleaner destroys its keys. GC is asked in a loop, bounded
     * as a hang guard.
     */
    @Test
    void anUnreachableFileIOsKeysAreDestroyed() throws Exception {
        Map<String, String> p = properties(MemoryFileIO.class.getName());
        p.put(SealedFileSystem.KEY_MODE, "envelope");
        io.sealpipe.internal.hadoop.EnvelopeKeys keys = unclosed(p);
        for (int i = 0; i < 600 && !keys.isClosed(); i++) {
            System.gc();
            Thread.sleep(50);
        }
        assertTrue(keys.isClosed(), "destroyed once unreachable");
    }

    private io.sealpipe.internal.hadoop.EnvelopeKeys unclosed(Map<String, String> p) throws IOException {
        SealedFileIO io = io(p);
        write(io, "mem://t/u", data(100, 7));
        assertArrayEquals(data(100, 7), io.newInputFile("mem://t/u", 100).newStream().readAllBytes());
        io.sealpipe.internal.hadoop.EnvelopeKeys keys = io.storage().envelopes;
        assertFalse(keys.isClosed());
        return keys;
    }

    /** A write after close fails naming the file. */
    @Test
    void aWriteAfterCloseNamesTheFile() throws Exception {
        try (SealedFileIO io = io()) {
            PositionOutputStream out = io.newOutputFile("mem://t/w").createOrOverwrite();
            out.write(1);
            out.close();
            IOException e = assertThrows(IOException.class, () -> out.write(2));
            assertTrue(e.getMessage().contains("mem://t/w"), e.toString());
            assertArrayEquals(new byte[] {1}, io.newInputFile("mem://t/w").newStream().readAllBytes());
        }
    }

    /** Without the wrapped FileIO's bulk deletion: one by one, every failure counted. */
    @Test
    void deleteFilesWithoutBulkDeletesOneByOne() throws Exception {
        Map<String, String> p = properties(FailingBareFileIO.class.getName());
        try (SealedFileIO io = io(p)) {
            write(io, "mem://t/a", data(5, 3));
            write(io, "mem://t/b", data(5, 4));
            write(io, "mem://t/fail-c", data(5, 5));
            io.deleteFiles(List.of("mem://t/a"));
            assertEquals(List.of("mem://t/b", "mem://t/fail-c"), new ArrayList<>(store.objects.keySet()));
            BulkDeletionFailureException e = assertThrows(BulkDeletionFailureException.class,
                    () -> io.deleteFiles(List.of("mem://t/fail-c", "mem://t/b", "mem://t/fail-d")));
            assertEquals(2, e.numberFailedObjects());
            assertEquals(List.of("mem://t/fail-c"), new ArrayList<>(store.objects.keySet()));
            UnsupportedOperationException u = assertThrows(UnsupportedOperationException.class, () -> io.listPrefix("mem://t/"));
            assertTrue(u.getMessage().contains(FailingBareFileIO.class.getName()), u.getMessage());
            assertThrows(UnsupportedOperationException.class, () -> io.deletePrefix("mem://t/"));
        }
    }

    /** A FileIO with no prefix or bulk operations, whose deletes of "fail-" files fail. */
    public static class FailingBareFileIO extends SealedFileIOTest.BareFileIO {
        private static final long serialVersionUID = 1L;

        @Override
        public void deleteFile(String path) {
            if (path.contains("fail-")) {
                throw new IllegalStateException("cannot delete " + path);
            }
            super.deleteFile(path);
        }
    }

    /** A wrapped FileIO whose streams fail every read with a message that names no file. */
    public static class FailingReadsFileIO extends SealedFileIOTest.BareFileIO {
        private static final long serialVersionUID = 1L;

        @Override
        public InputFile newInputFile(String path) {
            InputFile real = super.newInputFile(path);
            return new InputFile() {
                @Override
                public long getLength() {
                    return real.getLength();
                }

                @Override
                public SeekableInputStream newStream() {
                    return new SeekableInputStream() {
                        @Override
                        public long getPos() {
                            return 0;
                        }

                        @Override
                        public void seek(long newPos) {
                        }

                        @Override
                        public int read() throws IOException {
                            throw new IOException("connection reset");
                        }
                    };
                }

                @Override
                public String location() {
                    return path;
                }

                @Override
                public boolean exists() {
                    return true;
                }
            };
        }
    }

    /** A failure of the wrapped stream names the file. */
    @Test
    void aWrappedStreamsFailureNamesTheFile() throws Exception {
        try (SealedFileIO io = io(properties(FailingReadsFileIO.class.getName()))) {
            write(io, "mem://t/x", data(100, 8));
            try (SeekableInputStream in = io.newInputFile("mem://t/x", 100).newStream()) {
                IOException e = assertThrows(IOException.class, () -> ((RangeReadable) in).readFully(0, new byte[10], 0, 10));
                assertTrue(e.getMessage().startsWith("mem://t/x: ") && e.getMessage().contains("connection reset"),
                        e.toString());
            }
        }
    }

    @Test
    void nullCredentialsAreRejectedAsIcebergDoes() {
        try (SealedFileIO io = io()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> io.setCredentials(null));
            assertTrue(e.getMessage().contains("credentials"), e.getMessage());
            io.setCredentials(List.of());
            assertEquals(List.of(), io.credentials());
        }
    }

    @Test
    void isFinal() {
        assertTrue(java.lang.reflect.Modifier.isFinal(SealedFileIO.class.getModifiers()));
    }

    /** Sequential mode (no length), a seek past the end: reads give -1, as plain streams' do. */
    @Test
    void aSeekPastTheEndWithNoLengthReadsAsTheEnd() throws Exception {
        byte[] data = data(100, 6);
        try (SealedFileIO io = io()) {
            write(io, "mem://t/s", data);
            try (SeekableInputStream in = io.newInputFile("mem://t/s").newStream()) {
                assertEquals(data[0] & 0xff, in.read());
                in.seek(500);
                assertEquals(-1, in.read());
                assertEquals(-1, in.read(new byte[4], 0, 4));
            }
        }
    }
}
