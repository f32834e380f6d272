package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.FailingLocalFileSystem;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.tools.DistCp;
import org.apache.hadoop.tools.DistCpConstants;
import org.apache.hadoop.util.ToolRunner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * DistCp (hadoop-distcp 3.4.1, in the {@code LocalJobRunner}) into {@code sfile://} from a
 * source whose one file fails to read half-way ({@link FailingLocalFileSystem}). The copy is
 * tried three times, then fails the map and the job. With its temporary files (the default)
 * DistCp closes the failed copy's {@code .distcp.tmp.*} file, which seals it, and then deletes it
 * ({@code RetriableFileCopyCommand}): nothing is left. With {@code -direct} it writes the target
 * itself and leaves it closed: a valid, shorter file (the test says so, and fails if Hadoop
 * changes it).
 */
class DistCpFailingSourceTest {
    private static final int SOURCE_LENGTH = 300_000;

    private FailingSourceFixture fixture;
    private byte[] source;

    @BeforeEach
    void writeSource(TestInfo test) throws Exception {
        fixture = new FailingSourceFixture("distcp-" + test.getTestMethod().orElseThrow().getName());
        source = new byte[SOURCE_LENGTH];
        new Random(11).nextBytes(source);
        Files.createDirectories(fixture.dir.resolve("source"));
        Files.write(fixture.dir.resolve("source").resolve("big" + FailingLocalFileSystem.FAILS), source);
    }

    @AfterEach
    void closeFixture() throws Exception {
        fixture.close();
    }

    /**
     * {@code hadoop distcp OPTIONS source sfile://.../target}, in this JVM, which must read the
     * failing source: DistCp's exit code.
     */
    private int distcp(String... options) throws Exception {
        Configuration conf = fixture.jobConf();
        conf.addResource("distcp-default.xml");
        List<String> args = new ArrayList<>(List.of(options));
        args.add(fixture.dir.resolve("source").toUri().toString());
        args.add(fixture.sealedPath("target").toString());
        int failures = FailingLocalFileSystem.failures();
        int exit = ToolRunner.run(conf, new DistCp(conf, null), args.toArray(String[]::new));
        assertTrue(FailingLocalFileSystem.failures() > failures, "the source did not fail");
        return exit;
    }

    @Test
    void withTemporaryFilesAFailedCopyLeavesNothing() throws Exception {
        assertNotEquals(DistCpConstants.SUCCESS, distcp("-m", "1"), "DistCp's exit code");
        assertEquals(List.of(), fixture.files("target"), "files left under the target");
    }

    @Test
    void directWriteSealsTheShorterFile() throws Exception {
        assertNotEquals(DistCpConstants.SUCCESS, distcp("-direct", "-m", "1"), "DistCp's exit code");
        String name = "big" + FailingLocalFileSystem.FAILS;
        assertEquals(List.of(name), fixture.files("target"), "files left under the target");
        Map<String, byte[]> valid = fixture.validFiles("target");
        assertEquals(List.of(name), List.copyOf(valid.keySet()), "valid files under the target");
        FailingSourceFixture.assertShorterPrefix(source, valid.get(name), name);
    }
}
