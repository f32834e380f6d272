package io.sealpipe.iceberg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * SealedFileIO where Iceberg is on the class path and Hadoop is not: it loads, and
 * {@code initialize} fails saying that hadoop-common is needed (not with a
 * {@code NoClassDefFoundError}).
 */
class WithoutHadoopTest {
    @Test
    void initializeSaysHadoopIsNeeded() throws Exception {
        List<String> entries = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> e.endsWith("classes") || e.endsWith("test-classes") || e.contains("/org/apache/iceberg/"))
                .collect(Collectors.toList());
        assertTrue(entries.stream().noneMatch(e -> e.contains("hadoop")), entries.toString());
        List<String> command = ChildJvm.command("-cp", String.join(File.pathSeparator, entries),
                NoHadoopProbe.class.getName());
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), out);
        assertTrue(out.startsWith("java.lang.IllegalStateException: io.sealpipe.iceberg.SealedFileIO needs hadoop-common on"
                + " the class path"), out);
    }
}
