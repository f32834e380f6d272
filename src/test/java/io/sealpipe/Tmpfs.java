package io.sealpipe;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small {@code tmpfs} that a test mounts, to fill up: a real "No space left on device" from the
 * kernel. Mounting needs root (tests run as root here and in CI). Where {@code mount} is refused
 * the test is skipped with the reason, except under {@code CI=true}, where it fails: CI must run
 * the full-disk tests. {@link #close()} unmounts (lazily, so an open file a failing test left
 * cannot keep it mounted) and removes the directory.
 */
public final class Tmpfs implements AutoCloseable {
    /** The mounted directory. */
    public final Path dir;

    private Tmpfs(Path dir) {
        this.dir = dir;
    }

    /** Mounts a tmpfs of {@code bytes} on a new directory under {@code parent}. */
    public static Tmpfs mount(Path parent, long bytes) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory(parent, "tmpfs");
        String refused = run(List.of("mount", "-t", "tmpfs", "-o", "size=" + bytes + ",mode=0700", "tmpfs",
                dir.toString()));
        if (refused != null) {
            Files.delete(dir);
            throw MachineRequirement.unmet("mounting a tmpfs was refused (the full-disk tests need root): " + refused);
        }
        return new Tmpfs(dir);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        String failed = run(List.of("umount", "-l", dir.toString()));
        if (failed != null) {
            throw new IOException("could not unmount the test's tmpfs at " + dir + ": " + failed);
        }
        Files.delete(dir);
    }

    /**
     * Asserts that {@code e} is the disk's own error, as it reached the caller: an IOException
     * saying "No space left on device", not a wrapper or another error it caused. Hadoop's local
     * file system throws it inside its {@code FSError}, which a sealed file passes on as it is:
     * that FSError counts as the disk's error.
     */
    public static void assertNoSpace(Throwable e) {
        Throwable disk = e.getClass().getName().equals("org.apache.hadoop.fs.FSError") ? e.getCause() : e;
        if (!(disk instanceof IOException) || !String.valueOf(disk.getMessage()).contains("No space left on device")) {
            throw new AssertionError("the disk's IOException does not reach the caller as it is: " + e, e);
        }
    }

    /** Runs a command; null if it succeeded, else what it printed and its exit status. */
    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return String.join(" ", command) + ": " + e.getMessage();
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return String.join(" ", command) + " did not finish";
        }
        return p.exitValue() == 0 ? null : String.join(" ", command) + " exited " + p.exitValue() + ": " + output;
    }
}
