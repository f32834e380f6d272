package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.ChildJvm;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * SIGINT and SIGTERM in the middle of {@code encrypt} or {@code decrypt} to a file OUT: the
 * temporary file beside OUT (plaintext, when decrypting) is removed, OUT is not created, the JVM
 * exits 130 or 143 and says on one line what it removed. The child reads a pipe that this test
 * keeps open, so it is blocked mid-stream, with its temporary file created, when the signal comes.
 */
class InterruptCommandTest {
    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(60); // a safety net only

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"decrypt, TERM, 143", "decrypt, INT, 130", "encrypt, TERM, 143", "encrypt, INT, 130"})
    void aSignalRemovesTheTemporaryFile(String command, String signal, int exitCode) throws Exception {
        Path keyFile = Files.write(dir.resolve("key"), HexFormat.of().parseHex(MidStreamRunFixture.KEY));
        byte[] plain = new byte[200_000];
        new Random(7).nextBytes(plain);
        byte[] input = MidStreamRunFixture.input(command, plain);
        Path out = dir.resolve("out.bin");

        List<String> args = List.of(command, "--key-file", keyFile.toString(), "-", out.toString());
        Path errFile = dir.resolve("stderr.txt");
        Process p = childJvm(args).redirectError(errFile.toFile()).start();
        OutputStream stdin = p.getOutputStream();
        try {
            stdin.write(input, 0, input.length / 2); // and no more: the child waits for the rest
            stdin.flush();
            Path temp = MidStreamRunFixture.awaitTemporaryFile(dir, p, errFile);
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(temp)),
                    "the temporary file is for the owner only");

            if (signal.equals("TERM")) {
                // SIGTERM. Not Process.destroy(): it also closes this end of the pipe, and the
                // child, seeing the end of its input, could finish and exit 0 before the signal.
                assertTrue(p.toHandle().destroy(), "SIGTERM sent");
            } else {
                Assumptions.assumeFalse(ignoresSigint(p.pid()),
                        "SIGINT is ignored in this process tree (started in the background): the JVM keeps it ignored");
                Process kill = new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start();
                assertEquals(0, kill.waitFor(), "kill -INT");
            }
            if (!p.waitFor(DEADLINE_NANOS, TimeUnit.NANOSECONDS)) {
                p.destroyForcibly();
                fail("the child did not exit after SIG" + signal);
            }
            String err = Files.readString(errFile);
            assertEquals(exitCode, p.exitValue(), err);
            assertFalse(Files.exists(temp), "the temporary file is removed: " + err);
            assertFalse(Files.exists(out), "no OUT");
            assertEquals(1, err.strip().lines().count(), "one line: " + err);
            assertTrue(err.startsWith("sealpipe: interrupted: removed the unfinished " + temp + ";"), err);
            assertTrue(err.contains(out + " was not changed"), err);
        } finally {
            p.destroyForcibly();
            try {
                stdin.close();
            } catch (IOException ignored) {
                // the child is gone: its end of the pipe is closed
            }
        }
    }

    /** Whether the process ignores SIGINT (bit 1 of SigIgn in /proc/PID/status). */
    private static boolean ignoresSigint(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & (1L << 1)) != 0;
            }
        }
        return false;
    }

    /**
     * A shell runs background jobs (such as {@code mvn verify &}) with SIGINT ignored, their
     * children inherit that, and a JVM started so never handles SIGINT. GNU env can put the
     * default action back before it starts the child (it execs it: the pid stays the same).
     */
    private static final boolean ENV_RESTORES_SIGINT = envRestoresSigint();

    private static boolean envRestoresSigint() {
        try {
            return new ProcessBuilder("env", "--default-signal=INT", "true").start().waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static ProcessBuilder childJvm(List<String> args) {
        List<String> command = new ArrayList<>();
        if (ENV_RESTORES_SIGINT) {
            command.addAll(List.of("env", "--default-signal=INT"));
        }
        command.addAll(ChildJvm.command("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        command.addAll(args);
        return new ProcessBuilder(command);
    }
}
