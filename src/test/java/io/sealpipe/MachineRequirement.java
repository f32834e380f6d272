package io.sealpipe;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sealpipe.engine.TestEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a test needs of the machine (root to mount a file system, memory for a large child JVM).
 * Where it is missing the test is skipped with the reason, except in CI ({@code CI=true}), which
 * must run every such test: there it fails, so CI never passes by skipping it.
 */
public final class MachineRequirement {
    private MachineRequirement() {}

    /** Skips the calling test, or fails it in CI, if {@code met} is false; {@code unmet} says what is missing. */
    public static void require(boolean met, String unmet) {
        if (met) {
            return;
        }
        if (TestEngines.inCi()) {
            throw new AssertionError("CI must run this test, but " + unmet);
        }
        assumeTrue(false, unmet);
    }

    /** The machine's memory (MemTotal of /proc/meminfo), in bytes; 0 if it cannot be read. */
    public static long totalMemory() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }
}
