package io.sealpipe.hadoop;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.Tmpfs;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 29's full disk under the sealed file system: {@code sfile} over {@code file} on a
 * {@link Tmpfs} of 2 MiB (its keystore beside the test, off the full disk), a file of 6 MiB
 * written to it. The write fails with the disk's error (Hadoop's local file system reports it as
 * an {@code FSError}, an Error, whose cause is the kernel's "No space left on device"); {@code
 * abort()} after it throws nothing and {@code close()} nothing but that failure (again, or as
 * the cause of "the message was not finished"), and neither hangs; the file left behind is
 * rejected by the sealed file system.
 */
class SealedFullDiskTest {

    @ParameterizedTest(name = "abort first {0}")
    @ValueSource(booleans = {false, true})
    void aSealedFileOnAFullDisk(boolean abortFirst, @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
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
            if (fs.exists(file)) {
                byte[] back = null;
                try (FSDataInputStream in = fs.open(file)) {
                    back = in.readAllBytes(); // to its end: a shorter file that verified would end early here
                } catch (IOException rejected) {
                    // what must happen
                }
                if (back != null) {
                    fail("a sealed file cut short by a full disk was read: " + back.length + " of " + data.length
                            + " bytes");
                }
            }
        }
    }
}
