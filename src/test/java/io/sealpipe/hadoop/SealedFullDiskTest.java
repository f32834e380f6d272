package io.sealpipe.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.EveryReader;
import io.sealpipe.Tmpfs;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 29's full disk under the sealed file system: {@code sfile} over {@code file} on a
 * {@link Tmpfs} of 2 MiB (its keystore beside the test, off the full disk), a file of 6 MiB
 * written to it. The write fails with the disk's error (Hadoop's local file system reports it as
 * an {@code FSError}, an Error, whose cause is the kernel's "No space left on device"); {@code
 * abort()} after it throws nothing and {@code close()} nothing but that failure (again, or as
 * the cause of "the message was not finished"), and neither hangs; no file is left, or one that
 * every reader of the sealed file system rejects ({@link #assertNoFileOrRejectedByEveryReader}).
 */
class SealedFullDiskTest {

    @ParameterizedTest(name = "abort first {0}")
    @ValueSource(booleans = {false, true})
    void aSealedFileOnAFullDisk(boolean abortFirst, @TempDir Path dir) throws Exception {
        SealedFixture fixture = new SealedFixture(dir);
        byte[] data = SealedFixture.data(6 << 20, 29);
        try (Tmpfs disk = Tmpfs.mount(dir, 2 << 20); FileSystem fs = fixture.sealed()) {
            org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path("sfile://" + disk.dir.resolve("out"));
            FSDataOutputStream out = fs.create(file, true);
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                Throwable e = assertThrows(Throwable.class, () -> {
                    for (int off = 0; off < data.length; off += 100_000) {
                        out.write(data, off, Math.min(100_000, data.length - off));
                    }
                    out.close();
                });
                Tmpfs.assertNoSpace(e);
                if (abortFirst) {
                    out.abort(); // throws nothing: what its cleanup hit is in its result
                }
                try {
                    out.close();
                } catch (Throwable again) {
                    // that failure again, or the stream's "not finished" with it as the cause: nothing else
                    assertSame(e, again == e ? again : again.getCause(), "a close after the failure: " + again);
                }
            });
            assertNoFileOrRejectedByEveryReader(fs, file, data.length);
        }
    }

    /**
     * No file, or one that every reader of the sealed file system rejects: a stream read to its
     * end, a positioned read of the whole length the file system reports, and one of its last
     * byte (a shorter file that verified would end early, or report a length).
     */
    static void assertNoFileOrRejectedByEveryReader(FileSystem fs, org.apache.hadoop.fs.Path file, int written)
            throws IOException {
        if (!fs.exists(file)) {
            return;
        }
        EveryReader.mustReject(readers(fs, file), (reader, back) -> reader
                + ": a sealed file cut short by a full disk was read (" + back + " of " + written + " bytes)");
    }

    /** The positive control of the check: every one of its readers reads a whole sealed file. */
    @Test
    void everyReaderOfTheCheckReadsAWholeFile(@TempDir Path dir) throws Exception {
        SealedFixture fixture = new SealedFixture(dir);
        byte[] data = SealedFixture.data(100_000, 30);
        try (FileSystem fs = fixture.sealed()) {
            org.apache.hadoop.fs.Path file = fixture.sealedPath("whole");
            SealedFixture.write(fs, file, data);
            Map<String, EveryReader.Read<Integer>> readers = readers(fs, file);
            assertEquals(3, readers.size());
            for (Map.Entry<String, EveryReader.Read<Integer>> reader : readers.entrySet()) {
                assertEquals(data.length, reader.getValue().read(), reader.getKey());
            }
        }
    }

    /** Every way the check reads {@code file}, each giving the length it read. */
    private static Map<String, EveryReader.Read<Integer>> readers(FileSystem fs, org.apache.hadoop.fs.Path file) {
        Map<String, EveryReader.Read<Integer>> readers = new LinkedHashMap<>();
        readers.put("a stream read to its end", () -> {
            try (FSDataInputStream in = fs.open(file)) {
                return in.readAllBytes().length;
            }
        });
        readers.put("a positioned read of the whole length", () -> {
            try (FSDataInputStream in = fs.open(file)) {
                byte[] all = new byte[(int) fs.getFileStatus(file).getLen()];
                in.readFully(0, all);
                return all.length;
            }
        });
        readers.put("a positioned read of the last byte", () -> {
            try (FSDataInputStream in = fs.open(file)) {
                long length = fs.getFileStatus(file).getLen();
                byte[] last = new byte[1];
                in.readFully(Math.max(0, length - 1), last);
                return (int) length;
            }
        });
        return readers;
    }
}
