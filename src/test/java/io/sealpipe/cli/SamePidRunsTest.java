package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.cli.CliRun.Result;
import io.sealpipe.cli.TestHooks.Step;
import io.sealpipe.gcm.GcmStreams;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Two runs writing one OUT with the same process number (two containers sharing a volume, each
 * run PID 1; two NFS clients). A run must never publish a file it did not write: if another
 * process removes its temporary file and puts another in its place (run Y, taking X's file for a
 * leftover of its own PID and making its own under that name), X fails with one line saying so,
 * OUT is absent or as it was, and the other file is left alone. A test hook does what Y did at
 * the moment it matters: just after X has created its temporary file and before it locked it,
 * or once X has written all its bytes. And two runs with one PID never get one temporary name.
 */
class SamePidRunsTest {
    private static final String KEY = MidStreamRunFixture.KEY;
    private static final byte[] OTHER_RUNS_FILE = "run Y's unfinished output".getBytes(StandardCharsets.US_ASCII);
    private static final String EARLIER_OUT = "OUT as it was before";

    @TempDir
    Path dir;

    @AfterEach
    void removeHook() {
        TestHooks.install(null);
    }

    @ParameterizedTest(name = "{0} --force={2}, another file put in place at {1}")
    @CsvSource({"encrypt, CREATED, false", "encrypt, WRITTEN, false", "encrypt, CREATED, true",
        "encrypt, WRITTEN, true", "decrypt, CREATED, false", "decrypt, WRITTEN, false", "decrypt, CREATED, true",
        "decrypt, WRITTEN, true"})
    void aRunNeverPublishesATemporaryFileItDidNotWrite(String command, Step step, boolean force) throws Exception {
        Path keyFile = Files.write(dir.resolve("key"), HexFormat.of().parseHex(KEY));
        byte[] plain = new byte[100_000];
        new Random(5).nextBytes(plain);
        Path in = Files.write(dir.resolve("in"), MidStreamRunFixture.input(command, plain));
        Path out = dir.resolve("out");
        if (force) {
            Files.writeString(out, EARLIER_OUT);
        }
        AtomicReference<Path> replaced = new AtomicReference<>();
        TestHooks.install((s, path) -> {
            if (s == step && replaced.compareAndSet(null, path)) {
                // Run Y: removes the file, then makes its own, unfinished, under the same name.
                Files.delete(path);
                Files.write(path, OTHER_RUNS_FILE);
            }
        });
        List<String> args = new ArrayList<>(List.of(command, "--key-file", keyFile.toString()));
        if (force) {
            args.add("--force");
        }
        args.addAll(List.of(in.toString(), out.toString()));
        Result r = CliRun.run(args.toArray(String[]::new));
        TestHooks.install(null);

        Path other = replaced.get();
        assertTrue(other != null, "the hook ran at " + step + ": " + r.err());
        if (r.code() == 0) {
            // Finishing is fine only with this run's own output as OUT.
            assertFalse(Arrays.equals(OTHER_RUNS_FILE, Files.readAllBytes(out)),
                    "exit 0, and OUT is the other run's unfinished file: " + r.err());
            assertArrayEquals(plain, plaintextOf(command, out),
                    "exit 0, but OUT is not this run's output (" + Files.size(out) + " bytes): " + r.err());
        } else {
            assertEquals(1, r.code(), r.err());
            assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
            assertTrue(r.err().contains(other + " was removed or replaced by another process"), r.err());
            if (force) {
                assertEquals(EARLIER_OUT, Files.readString(out), "OUT as it was");
            } else {
                assertFalse(Files.exists(out), "no OUT");
            }
        }
        assertArrayEquals(OTHER_RUNS_FILE, Files.readAllBytes(other), "the other run's file is left to it");
    }

    private static byte[] plaintextOf(String command, Path out) throws IOException {
        if (command.equals("decrypt")) {
            return Files.readAllBytes(out);
        }
        GcmStreams gcm = GcmStreams.builder().key(HexFormat.of().parseHex(KEY)).build();
        try (InputStream plain = gcm.decrypt(Files.newInputStream(out))) {
            return plain.readAllBytes();
        }
    }

    /**
     * Run Y's cleanup of leftovers, in the moment between X creating its temporary file and
     * locking it: it does not look at the file (nor say anything of it), and X finishes.
     */
    @Test
    void anotherRunsCleanupLeavesATemporaryFileNotYetLocked() throws Exception {
        Path keyFile = Files.write(dir.resolve("key"), HexFormat.of().parseHex(KEY));
        Path in = Files.writeString(dir.resolve("in"), "data\n");
        Path out = dir.resolve("out");
        StringWriter cleanupSaid = new StringWriter();
        AtomicReference<Path> created = new AtomicReference<>();
        TestHooks.install((step, path) -> {
            if (step == Step.CREATED) {
                created.set(path);
                Io.Output.removeLeftovers(path.getParent(), "out", new PrintWriter(cleanupSaid));
                assertTrue(Files.exists(path), "the cleanup removed a file its run had just created");
            }
        });
        Result r = CliRun.run("encrypt", "--key-file", keyFile.toString(), in.toString(), out.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(created.get() != null, "the hook ran");
        assertEquals("", cleanupSaid.toString());
        assertArrayEquals("data\n".getBytes(StandardCharsets.US_ASCII), plaintextOf("encrypt", out));
    }

    @Test
    void twoRunsWithTheSamePidGetDifferentTemporaryNames() throws Exception {
        Path keyFile = Files.write(dir.resolve("key"), HexFormat.of().parseHex(KEY));
        Path in = Files.writeString(dir.resolve("in"), "data\n");
        Path out = dir.resolve("out");
        List<Path> temporary = Collections.synchronizedList(new ArrayList<>());
        TestHooks.install((step, path) -> {
            if (step == Step.WRITTEN) {
                temporary.add(path);
            }
        });
        // Two runs in this JVM: one process number, as for two containers' PID 1.
        for (int run = 0; run < 2; run++) {
            Result r = CliRun.run("encrypt", "--force", "--key-file", keyFile.toString(), in.toString(),
                    out.toString());
            assertEquals(0, r.code(), r.err());
        }
        assertEquals(2, temporary.size(), temporary.toString());
        assertNotEquals(temporary.get(0), temporary.get(1), "one temporary name for two runs");
        String pid = Long.toString(ProcessHandle.current().pid());
        for (Path t : temporary) {
            assertTrue(t.getFileName().toString().matches("\\.out\\.sealpipe-" + pid + "-[0-9a-f]{16}\\.tmp"),
                    "OUT's name, the PID and a random part: " + t);
        }
    }
}
