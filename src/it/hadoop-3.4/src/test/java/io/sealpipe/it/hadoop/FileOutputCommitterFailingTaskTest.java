package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.FailingLocalFileSystem;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.OutputCommitter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * MapReduce's {@link FileOutputCommitter}, algorithms 1 and 2, writing to {@code sfile://} from
 * a task whose input fails half-way ({@link FailingLocalFileSystem}). The failing task closes its
 * output (MapTask's {@code closeQuietly}; Spark's {@code FileFormatDataWriter.abort()} does the
 * same), which seals a valid, shorter file; but that file is in the task attempt's directory under
 * {@code _temporary}, which {@code abortTask} deletes (and {@code abortJob} with all of
 * {@code _temporary}), and only a committed attempt's files reach the output directory.
 */
class FileOutputCommitterFailingTaskTest {
    private static final String ALGORITHM = FileOutputCommitter.FILEOUTPUTCOMMITTER_ALGORITHM_VERSION;
    private static final int SOURCE_LENGTH = 300_000;

    private FailingSourceFixture fixture;
    private byte[] source;

    @BeforeEach
    void writeSource(TestInfo test) throws Exception {
        fixture = new FailingSourceFixture("committer-" + test.getTestMethod().orElseThrow().getName()
                + "-" + test.getDisplayName().replaceAll("\\W", ""));
        StringBuilder text = new StringBuilder();
        for (int i = 0; text.length() < SOURCE_LENGTH; i++) {
            text.append(String.format("line %06d of the input that fails half-way%n", i));
        }
        source = text.substring(0, SOURCE_LENGTH).getBytes(StandardCharsets.US_ASCII);
        Files.createDirectories(fixture.dir.resolve("input"));
        Files.write(fixture.dir.resolve("input").resolve("lines" + FailingLocalFileSystem.FAILS), source);
        Files.write(fixture.dir.resolve("input-whole"), source);
        Recording.ABORTS.clear();
    }

    @AfterEach
    void closeFixture() throws Exception {
        fixture.close();
    }

    /**
     * A map-only job (the identity mapper, text in and out) in the {@code LocalJobRunner}, whose
     * one map fails when its input does, after it wrote part of its output: when the committer is
     * first told to abort (the local runner calls only {@code abortJob}; on YARN the application
     * master calls {@code abortTask} for the failed attempt first) the map's file is a valid,
     * shorter file in the attempt's directory; after the job nothing is left under the output.
     */
    @ParameterizedTest(name = "algorithm {0}")
    @ValueSource(ints = {1, 2})
    void aMapWhoseInputFailsLeavesNothingInTheOutput(int algorithm) throws Exception {
        Configuration conf = fixture.jobConf();
        conf.setInt(ALGORITHM, algorithm);
        Job job = Job.getInstance(conf, "failing input, algorithm " + algorithm);
        job.setMapperClass(Mapper.class);
        job.setNumReduceTasks(0);
        job.setOutputKeyClass(LongWritable.class);
        job.setOutputValueClass(Text.class);
        job.setOutputFormatClass(Recording.class);
        FileInputFormat.addInputPath(job, new Path(fixture.dir.resolve("input").toUri()));
        FileOutputFormat.setOutputPath(job, fixture.sealedPath("output"));
        int failures = FailingLocalFileSystem.failures();
        assertFalse(job.waitForCompletion(false), "the job succeeded");
        assertTrue(FailingLocalFileSystem.failures() > failures, "the input did not fail");

        assertFalse(Recording.ABORTS.isEmpty(), "the committer was never told to abort");
        Recording.Abort first = Recording.ABORTS.get(0);
        assertEquals(1, first.valid().size(), () -> first.call() + ": valid files " + first.valid().keySet());
        Map.Entry<String, byte[]> sealed = first.valid().entrySet().iterator().next();
        assertTrue(sealed.getKey().matches("_temporary/0/_temporary/attempt_[^/]+_m_000000_0/part-m-00000"),
                sealed.getKey());
        assertShorterOutput(sealed.getValue(), sealed.getKey());
        assertEquals(List.of(), fixture.files("output"), "files left under the output");
    }

    /**
     * {@code output}, the identity mapper's text output ({@code offset TAB line}), is that of a
     * part of the source's lines, from its start.
     */
    private void assertShorterOutput(byte[] output, String what) {
        String[] lines = new String(output, StandardCharsets.US_ASCII).split("\n");
        long offset = 0;
        for (String line : lines) {
            String[] offsetAndLine = line.split("\t", 2);
            assertEquals(offset, Long.parseLong(offsetAndLine[0]), what);
            byte[] expected = (offsetAndLine[1] + "\n").getBytes(StandardCharsets.US_ASCII);
            assertArrayEquals(expected,
                    java.util.Arrays.copyOfRange(source, (int) offset, (int) offset + expected.length), what);
            offset += expected.length;
        }
        assertTrue(lines.length > 0 && offset <= FailingLocalFileSystem.FAIL_AFTER,
                what + ": the output of " + offset + " bytes");
    }

    /**
     * The committer's calls as the framework makes them: the first attempt's copy fails and
     * closes its output (a valid, shorter file in the attempt's directory), {@code abortTask}
     * deletes it, the second attempt copies the whole input and commits, the job commits: the
     * output holds the whole file and {@code _SUCCESS}, nothing else.
     */
    @ParameterizedTest(name = "algorithm {0}")
    @ValueSource(ints = {1, 2})
    void abortTaskDeletesTheFailedAttemptsSealedShorterFile(int algorithm) throws Exception {
        Configuration conf = fixture.jobConf();
        conf.setInt(ALGORITHM, algorithm);
        Path output = fixture.sealedPath("output");
        FileSystem sealed = output.getFileSystem(conf);
        FileSystem local = FileSystem.getLocal(conf);
        JobID jobId = new JobID("failing", 1);
        JobContext jobContext = new JobContextImpl(conf, jobId);
        TaskID task = new TaskID(jobId, TaskType.MAP, 0);

        TaskAttemptContext first = new TaskAttemptContextImpl(conf, new TaskAttemptID(task, 0));
        FileOutputCommitter firstCommitter = new FileOutputCommitter(output, first);
        firstCommitter.setupJob(jobContext);
        firstCommitter.setupTask(first);
        Path firstFile = new Path(firstCommitter.getWorkPath(), "part-m-00000");
        Path failing = new Path(fixture.dir.resolve("input").resolve("lines" + FailingLocalFileSystem.FAILS).toUri());
        IOException failure = assertThrows(IOException.class,
                () -> IOUtils.copyBytes(local.open(failing), sealed.create(firstFile), conf, true));
        assertTrue(String.valueOf(failure.getMessage()).contains("a failing source"), failure::toString);
        String firstRelative = relative(firstFile);
        Map<String, byte[]> beforeAbort = fixture.validFiles("output");
        assertEquals(List.of(firstRelative), List.copyOf(beforeAbort.keySet()), "valid files before abortTask");
        FailingSourceFixture.assertShorterPrefix(source, beforeAbort.get(firstRelative), firstRelative);
        firstCommitter.abortTask(first);
        assertFalse(sealed.exists(firstCommitter.getWorkPath()), "the first attempt's directory after abortTask");

        TaskAttemptContext second = new TaskAttemptContextImpl(conf, new TaskAttemptID(task, 1));
        FileOutputCommitter secondCommitter = new FileOutputCommitter(output, second);
        secondCommitter.setupTask(second);
        try (InputStream in = local.open(new Path(fixture.dir.resolve("input-whole").toUri()))) {
            IOUtils.copyBytes(in, sealed.create(new Path(secondCommitter.getWorkPath(), "part-m-00000")), conf, true);
        }
        assertTrue(secondCommitter.needsTaskCommit(second));
        secondCommitter.commitTask(second);
        secondCommitter.commitJob(jobContext);

        assertEquals(List.of("_SUCCESS", "part-m-00000"), fixture.files("output"), "files in the output");
        assertArrayEquals(source, fixture.validFiles("output").get("part-m-00000"), "the committed file");
    }

    /** {@code path} (under the output directory) relative to it, as {@link FailingSourceFixture#files} names it. */
    private String relative(Path path) {
        String output = fixture.dir.resolve("output") + "/";
        String full = path.toUri().getPath();
        assertTrue(full.startsWith(output), full);
        return full.substring(output.length());
    }

    /**
     * Text output whose committer records, each time it is told to abort a task or the job and
     * before it does, the files under the output directory that read whole.
     */
    public static final class Recording extends TextOutputFormat<LongWritable, Text> {
        /** An abort: the call, and each file that read whole (relative path to plaintext). */
        record Abort(String call, Map<String, byte[]> valid) {}

        /** The aborts in this JVM (the local runner runs the job in it), in order. */
        static final List<Abort> ABORTS = new CopyOnWriteArrayList<>();

        @Override
        public synchronized OutputCommitter getOutputCommitter(TaskAttemptContext context) throws IOException {
            Path output = getOutputPath(context);
            return new FileOutputCommitter(output, context) {
                @Override
                public void abortTask(TaskAttemptContext taskContext) throws IOException {
                    ABORTS.add(new Abort("abortTask", validFiles(output, taskContext.getConfiguration())));
                    super.abortTask(taskContext);
                }

                @Override
                public void abortJob(JobContext jobContext, JobStatus.State state) throws IOException {
                    ABORTS.add(new Abort("abortJob", validFiles(output, jobContext.getConfiguration())));
                    super.abortJob(jobContext, state);
                }
            };
        }

        /** Through the job's sealed file system (its output has no failing name). */
        private static Map<String, byte[]> validFiles(Path output, Configuration conf) throws IOException {
            FileSystem fs = output.getFileSystem(conf);
            String prefix = fs.makeQualified(output).toUri().getPath() + "/";
            Map<String, byte[]> valid = new TreeMap<>();
            RemoteIterator<LocatedFileStatus> files = fs.listFiles(output, true);
            while (files.hasNext()) {
                Path file = files.next().getPath();
                try (InputStream in = fs.open(file)) {
                    valid.put(file.toUri().getPath().substring(prefix.length()), in.readAllBytes());
                } catch (IOException e) {
                    // not a valid file: not recorded
                }
            }
            return valid;
        }
    }
}
