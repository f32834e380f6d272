package io.sealpipe.iceberg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.ChildJvm;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
        // By the jar's file name (its artifact), not the whole path: a checkout or local repository
        // under a folder named "hadoop" must not change what is kept.
        List<String> entries = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> new File(e).isDirectory() || new File(e).getName().startsWith("iceberg-"))
                .collect(Collectors.toList());
        assertTrue(entries.stream().noneMatch(e -> new File(e).getName().contains("hadoop")), entries.toString());
        assertTrue(entries.stream().anyMatch(e -> new File(e).getName().startsWith("iceberg-api-")), entries.toString());
        List<String> command = ChildJvm.command("-cp", String.join(File.pathSeparator, entries),
                NoHadoopProbe.class.getName());
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        if (!child.waitFor(5, TimeUnit.MINUTES)) { // a hang guard, not a timing
            child.destroyForcibly().waitFor();
            fail("the child JVM did not end in 5 minutes: " + output.getNow("(no output)"));
        }
        String out = output.get(1, TimeUnit.MINUTES);
        assertEquals(0, child.exitValue(), out);
        assertTrue(out.startsWith("java.lang.IllegalStateException: io.sealpipe.iceberg.SealedFileIO needs hadoop-common on"
                + " the class path"), out);
    }
}
