package io.sealpipe;

import io.sealpipe.engine.TestEngines;
import java.lang.management.ManagementFactory;
import org.opentest4j.TestAbortedException;

/**
 * What a test needs of the machine (root to mount a file system, memory for a large child JVM).
 * Where it is missing the test is skipped with the reason, except in CI ({@code CI=true}), which
 * must run every such test: there it fails, so CI never passes by skipping it.
 */
public final class MachineRequirement {
    private MachineRequirement() {}

    /** Skips the calling test, or fails it in CI, if {@code met} is false; {@code unmet} says what is missing. */
    public static void require(boolean met, String unmet) {
        if (!met) {
            throw unmet(unmet);
        }
    }

    /**
     * What to throw when the machine lacks what the test needs ({@code what}): an abort (the test
     * is skipped), or in CI an IllegalStateException (the test fails).
     */
    public static RuntimeException unmet(String what) {
        if (TestEngines.inCi()) {
            return new IllegalStateException("CI must run this test, but " + what);
        }
        return new TestAbortedException(what);
    }

    /**
     * The memory this JVM sees (the machine's, or its container's limit where one is set), in
     * bytes.
     */
    public static long totalMemory() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize();
    }
}
