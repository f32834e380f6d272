package io.sealpipe.hadoop;

import static io.sealpipe.hadoop.FailingLocalFileSystem.FAILS;
import static io.sealpipe.hadoop.FailingLocalFileSystem.FAIL_AFTER;
import static io.sealpipe.hadoop.SealedFixture.data;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.util.ToolRunner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What Hadoop's own copy helpers leave at a sealed destination when their source fails half-way
 * (a {@link FailingLocalFileSystem} file that throws at byte {@value FailingLocalFileSystem#FAIL_AFTER}
 * of its 300,000). {@code close()} seals what was written and cannot see the caller's source, so
 * a helper that closes its output when the copy fails leaves a valid, shorter file: the tests named
 * {@code ...SealsTheShorterFile} record that Hadoop 3.4.1 does so (they fail if Hadoop changes it),
 * the others that a path leaves no file that reads as valid. docs/security.md, "Guarantees", lists both.
 */
class SealedCopyHelpersTest {
    private static final int SOURCE_LENGTH = 300_000;

    @TempDir
    java.nio.file.Path dir;

    private Configuration conf;
    private FileSystem sealed;
    private FileSystem local;
    private byte[] source;
    /** The source that fails, {@code file:///.../source.fails}. */
    private Path failing;

    @BeforeEach
    void setUp() throws IOException {
        SealedFixture fixture = new SealedFixture(dir);
        conf = new Configuration(fixture.conf);
        conf.set("fs.file.impl", FailingLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        sealed = FileSystem.get(URI.create("sfile:///"), conf);
        local = FileSystem.getLocal(conf);
        source = data(SOURCE_LENGTH, 5);
        java.nio.file.Path file = dir.resolve("source" + FAILS);
        Files.write(file, source);
        failing = new Path(file.toUri());
    }

    @AfterEach
    void tearDown() throws IOException {
        sealed.close();
        local.close();
    }

    private Path sealedPath(String name) {
        return new Path("sfile://" + dir.resolve(name).toAbsolutePath());
    }

    /** The plaintext of {@code path} read to its end, or empty if it is not there or any read fails. */
    private Optional<byte[]> readsWhole(Path path) {
        try (InputStream in = sealed.open(path)) {
            return Optional.of(in.readAllBytes());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * {@code path} is a valid sealed file of the source's first bytes, up to its failure (what
     * the helper had copied: a multiple of its buffer, where a buffered reader takes the rest).
     */
    private void assertSealedShorterFile(Path path) throws IOException {
        byte[] read = readsWhole(path).orElseThrow(() -> new AssertionError(path + " does not read as a valid file"));
        assertTrue(read.length > 0 && read.length <= FAIL_AFTER, path + " reads as " + read.length + " bytes");
        assertArrayEquals(Arrays.copyOf(source, read.length), read, path + ": the source's bytes before its failure");
        assertEquals(read.length, sealed.getFileStatus(path).getLen(), path + " lists with the shorter length");
    }

    /** What the failing source threw, passed on by the helper. */
    private static void assertSourceFailure(IOException e) {
        assertTrue(String.valueOf(e.getMessage()).contains("a failing source"), () -> "another failure: " + e);
    }

    @Test
    void copyBytesWithCloseTrueSealsTheShorterFile() throws IOException {
        Path withConf = sealedPath("with-conf");
        assertSourceFailure(assertThrows(IOException.class,
                () -> IOUtils.copyBytes(local.open(failing), sealed.create(withConf), conf, true)));
        assertSealedShorterFile(withConf);

        Path withBufferSize = sealedPath("with-buffer-size");
        assertSourceFailure(assertThrows(IOException.class,
                () -> IOUtils.copyBytes(local.open(failing), sealed.create(withBufferSize), 4096, true)));
        assertSealedShorterFile(withBufferSize);
    }

    /**
     * The remedy for code of one's own: {@code close = false}, {@code abort()} on failure. The
     * file left behind (over a file system that cannot drop it: the local one, HDFS) is unsealed
     * and every reader rejects it; over S3A nothing is stored.
     */
    @Test
    void copyBytesWithoutCloseAndAbortOnFailureLeavesNoValidFile() throws IOException {
        Path path = sealedPath("aborted");
        FSDataOutputStream out = sealed.create(path);
        try (InputStream in = local.open(failing)) {
            IOUtils.copyBytes(in, out, conf, false);
            out.close();
        } catch (IOException e) {
            assertSourceFailure(e);
            out.abort();
        }
        out.close(); // as a try-with-resources around it would: nothing after abort()
        assertTrue(sealed.exists(path), "the unsealed file over the local file system");
        assertFalse(readsWhole(path).isPresent(), "the aborted file reads as a valid one");
    }

    @Test
    void fileUtilCopySealsTheShorterFile() throws IOException {
        Path path = sealedPath("file-util-copy");
        assertSourceFailure(assertThrows(IOException.class,
                () -> FileUtil.copy(local, failing, sealed, path, false, conf)));
        assertSealedShorterFile(path);
    }

    @Test
    void copyFromLocalFileSealsTheShorterFile() throws IOException {
        Path path = sealedPath("copy-from-local");
        assertSourceFailure(assertThrows(IOException.class, () -> sealed.copyFromLocalFile(failing, path)));
        assertSealedShorterFile(path);
    }

    /** {@code hadoop fs COMMAND [OPTIONS] failing destination}, which must fail with the source: its exit code. */
    private int fsShell(String command, List<String> options, Path destination) throws Exception {
        List<String> args = new ArrayList<>(List.of(command));
        args.addAll(options);
        args.add(failing.toString());
        args.add(destination.toString());
        int failures = FailingLocalFileSystem.failures();
        FsShell shell = new FsShell(conf);
        try {
            return ToolRunner.run(conf, shell, args.toArray(String[]::new));
        } finally {
            shell.close();
            assertTrue(FailingLocalFileSystem.failures() > failures, "the source did not fail");
        }
    }

    /**
     * Without {@code -d} the shell writes {@code DESTINATION._COPYING_} and renames it only after
     * the copy: the failed copy's file is closed (sealed, shorter) and then deleted, so nothing is
     * left under either name.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-put", "-copyFromLocal", "-cp"})
    void fsShellWithoutDLeavesNothing(String command) throws Exception {
        Path path = sealedPath("shell" + command);
        assertEquals(1, fsShell(command, List.of(), path), "exit code");
        assertFalse(sealed.exists(path), "the destination");
        assertFalse(sealed.exists(path.suffix("._COPYING_")), "the temporary file");
    }

    /** With {@code -d} the shell writes the destination itself, closes it on failure and leaves it. */
    @ParameterizedTest
    @ValueSource(strings = {"-put", "-copyFromLocal", "-cp"})
    void fsShellWithDSealsTheShorterFile(String command) throws Exception {
        Path path = sealedPath("shell-d" + command);
        assertEquals(1, fsShell(command, List.of("-d"), path), "exit code");
        assertSealedShorterFile(path);
        assertFalse(sealed.exists(path.suffix("._COPYING_")), "a temporary file");
    }
}
