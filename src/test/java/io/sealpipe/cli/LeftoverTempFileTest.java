package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import io.sealpipe.cli.CliRun.Result;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code encrypt} and {@code decrypt} killed with SIGKILL in the middle of writing OUT (no
 * shutdown hook runs): OUT does not exist, only the temporary file {@code .OUT.sealpipe-PID-RANDOM.tmp}
 * beside it; the next run writing that OUT removes it, and says so, as it removes every leftover
 * of OUT whose process is no longer running; it keeps those of running processes, and those with
 * its own process number (another container's run may be writing them), which it names.
 */
class LeftoverTempFileTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"encrypt", "decrypt"})
    void aKilledRunLeavesOnlyItsTemporaryFileAndTheNextRunRemovesIt(String command) throws Exception {
        Path keyFile = Files.write(dir.resolve("key"), HexFormat.of().parseHex(MidStreamRunFixture.KEY));
        byte[] plain = new byte[300_000];
        new Random(11).nextBytes(plain);
        byte[] input = MidStreamRunFixture.input(command, plain);
        Path out = dir.resolve("out.bin");

        List<String> cli = ChildJvm.command("-cp", System.getProperty("java.class.path"), Main.class.getName(), command,
                "--key-file", keyFile.toString(), "-", out.toString());
        Path errFile = dir.resolve("stderr.txt");
        Process p = new ProcessBuilder(cli).redirectError(errFile.toFile()).start();
        Path temp;
        try (OutputStream stdin = p.getOutputStream()) {
            stdin.write(input, 0, input.length / 2); // and no more: the child waits for the rest
            stdin.flush();
            temp = MidStreamRunFixture.awaitTemporaryFile(dir, p, errFile);
            assertTrue(temp.getFileName().toString().matches("\\.out\\.bin\\.sealpipe-" + p.pid() + "-[0-9a-f]{16}\\.tmp"),
                    "the temporary file names OUT, the process writing it and a random part: " + temp);
            p.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
        assertFalse(Files.exists(out), "no OUT after a kill");
        assertTrue(Files.exists(temp), "the temporary file is left");

        Path in = Files.write(dir.resolve("in"), input);
        Result next = CliRun.run(command, "--key-file", keyFile.toString(), in.toString(), out.toString());
        assertEquals(0, next.code(), next.err());
        assertEquals("sealpipe: removed " + temp + ", left by an earlier run that did not finish (process " + p.pid()
                + " is no longer running)\n", next.err());
        assertFalse(Files.exists(temp), "the leftover is removed");
        assertTrue(Files.exists(out));
    }

    @Test
    void leftoversOfRunningProcessesAndOfOtherFilesAreKept() throws Exception {
        Path keyFile = Files.write(dir.resolve("key"), HexFormat.of().parseHex(MidStreamRunFixture.KEY));
        Path in = Files.writeString(dir.resolve("in"), "data\n");
        Process running = new ProcessBuilder("cat").start(); // runs until its input ends
        Process ended = new ProcessBuilder("true").start();
        assertEquals(0, ended.waitFor());
        try {
            Path ofRunning = Files.writeString(dir.resolve(".out.sealpipe-" + running.pid() + ".tmp"), "x");
            Path ofEnded = Files.writeString(dir.resolve(".out.sealpipe-" + ended.pid() + ".tmp"), "x");
            Path ofEndedSecond = Files.writeString(dir.resolve(".out.sealpipe-" + ended.pid() + "-2.tmp"), "x");
            Path ofEndedRandom = Files.writeString(dir.resolve(".out.sealpipe-" + ended.pid() + "-0123456789abcdef.tmp"),
                    "x");
            Path ofEndedUnlocked = Files.writeString(dir.resolve(".out.sealpipe-" + ended.pid() + "-0123456789abcdef.new"),
                    "");
            Path ofThisJvm = Files.writeString(
                    dir.resolve(".out.sealpipe-" + ProcessHandle.current().pid() + "-fedcba9876543210.tmp"),
                    "not written by any command of this JVM");
            Path ofOtherOut = Files.writeString(dir.resolve(".other.sealpipe-" + ended.pid() + ".tmp"), "x");
            Path notOurs = Files.writeString(dir.resolve(".out.sealpipe-12x.tmp"), "x");

            Result r = CliRun.run("encrypt", "--key-file", keyFile.toString(), in.toString(),
                    dir.resolve("out").toString());
            assertEquals(0, r.code(), r.err());
            assertFalse(Files.exists(ofEnded), "a leftover of an ended process is removed");
            assertFalse(Files.exists(ofEndedSecond), "a leftover of an ended process is removed");
            assertFalse(Files.exists(ofEndedRandom), "a leftover of an ended process is removed");
            assertTrue(Files.exists(ofEndedUnlocked), "a file not yet locked by its writer is never looked at");
            assertFalse(Files.exists(ofThisJvm), "an unlocked file with this process's number is a dead run's: its"
                    + " lock, not its number, tells");
            assertTrue(Files.exists(ofRunning), "a running process may still be writing it");
            assertTrue(Files.exists(ofOtherOut), "another OUT's");
            assertTrue(Files.exists(notOurs), "not a name sealpipe makes");
            assertEquals(4, r.err().lines().count(), r.err());
            assertTrue(r.err().contains("sealpipe: removed " + ofEnded + ", left by an earlier run that did not finish"
                    + " (process " + ended.pid() + " is no longer running)"), r.err());
            assertTrue(r.err().contains("sealpipe: removed " + ofThisJvm + ", left by an earlier run that did not finish"
                    + " (it has this process's number, but no process holds its lock)"), r.err());
            assertFalse(r.err().contains(ofRunning.toString()), r.err());
        } finally {
            running.destroyForcibly();
        }
    }

}
