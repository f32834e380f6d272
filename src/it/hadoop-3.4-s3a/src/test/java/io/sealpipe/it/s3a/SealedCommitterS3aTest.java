package io.sealpipe.it.s3a;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealedCommitterFactory;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * MapReduce jobs (LocalJobRunner) writing to {@code ss3a://} through
 * {@link SealedCommitterFactory}: with S3A's magic committer the task output is sealed as it is
 * written, published by the committer's multipart uploads, and reads back whole; S3A's staging
 * committers, which would upload unsealed local files, are refused with the reason when the
 * committer is made.
 */
class SealedCommitterS3aTest {
    private static final int LINES = 30_000;
    private static S3Server server;
    private static Configuration conf;
    private static java.nio.file.Path input;

    @BeforeAll
    static void start() throws Exception {
        server = S3Server.start();
        java.nio.file.Path dir = Files.createDirectories(java.nio.file.Path.of("target", "sealed-committer").toAbsolutePath());
        conf = S3Files.sealedConf(server, "sealed-committer");
        conf.set("mapreduce.framework.name", "local");
        conf.set("mapreduce.outputcommitter.factory.scheme.ss3a", SealedCommitterFactory.class.getName());
        // S3Proxy refuses S3A's ListMultipartUploads (it names max-uploads), which the committers
        // use to abort leftover uploads under the destination when a job ends.
        conf.setBoolean("fs.s3a.committer.abort.pending.uploads", false);
        input = dir.resolve("input");
        S3Files.deleteTree(input);
        Files.createDirectories(input);
        for (int f = 0; f < 3; f++) {
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < LINES; i++) {
                lines.add("file " + f + " line " + i + " " + Long.toHexString((long) i * 2654435761L * (f + 1)));
            }
            Files.write(input.resolve("part-" + f + ".txt"), lines);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            FileSystem.closeAll();
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    /** Tags each line with its length, so the output is not the input. */
    public static final class Tag extends Mapper<LongWritable, Text, Text, Text> {
        @Override
        protected void map(LongWritable key, Text value, Context context) throws IOException, InterruptedException {
            context.write(value, new Text(Integer.toString(value.getLength())));
        }
    }

    private static Job job(String committer, Path output) throws IOException {
        Configuration jobConf = new Configuration(conf);
        jobConf.set("fs.s3a.committer.name", committer);
        Job job = Job.getInstance(jobConf, "sealed " + committer);
        job.setMapperClass(Tag.class);
        job.setNumReduceTasks(2);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(Text.class);
        job.setOutputFormatClass(TextOutputFormat.class);
        FileInputFormat.addInputPath(job, new Path(input.toUri()));
        FileOutputFormat.setOutputPath(job, output);
        return job;
    }

    @Test
    void theMagicCommitterPublishesSealedFiles() throws Exception {
        Path output = new Path("ss3a://" + S3Server.BUCKET + "/magic-out");
        assertTrue(job("magic", output).waitForCompletion(false), "the job succeeds");

        SealedFileSystem sealed = (SealedFileSystem) output.getFileSystem(conf);
        FileSystem s3a = sealed.getWrappedFileSystem();
        List<String> lines = new ArrayList<>();
        int parts = 0;
        for (FileStatus status : sealed.listStatus(output)) {
            String name = status.getPath().getName();
            if (!name.startsWith("part-")) {
                continue;
            }
            parts++;
            byte[] plain;
            try (FSDataInputStream in = sealed.open(status.getPath())) {
                plain = in.readAllBytes(); // authenticated to the end
            }
            assertEquals(status.getLen(), plain.length, name + ": its listed length");
            byte[] stored;
            try (FSDataInputStream in = s3a.open(sealed.toWrapped(status.getPath()))) {
                stored = in.readAllBytes();
            }
            assertNotEquals(new String(stored, StandardCharsets.ISO_8859_1), new String(plain, StandardCharsets.ISO_8859_1));
            for (String line : new String(plain, StandardCharsets.UTF_8).split("\n")) {
                if (!line.isEmpty()) {
                    lines.add(line);
                }
            }
        }
        assertEquals(2, parts, "one file per reducer");
        List<String> expected = new ArrayList<>();
        for (java.nio.file.Path file : Files.list(input).sorted().toList()) {
            for (String line : Files.readAllLines(file)) {
                expected.add(line + "\t" + line.getBytes(StandardCharsets.UTF_8).length);
            }
        }
        Collections.sort(expected);
        Collections.sort(lines);
        assertEquals(expected, lines, "every line, once");

        // The magic committer ran: its _SUCCESS (a plain JSON record, written through S3A) names it.
        String success;
        try (FSDataInputStream in = s3a.open(sealed.toWrapped(new Path(output, "_SUCCESS")))) {
            success = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(success.contains("\"committer\" : \"magic\"") || success.contains("\"committer\":\"magic\""), success);
        assertFalse(s3a.exists(sealed.toWrapped(new Path(output, "__magic"))), "the magic directory is gone");
        assertTrue(server.pendingUploads("magic-out/").isEmpty(), "no upload left pending");
    }

    @Test
    void aStagingCommitterIsRefusedWithTheReason() throws Exception {
        Path output = new Path("ss3a://" + S3Server.BUCKET + "/staging-out");
        for (String committer : new String[] {"directory", "partitioned"}) {
            Configuration jobConf = new Configuration(conf);
            jobConf.set("fs.s3a.committer.name", committer);
            TaskAttemptContextImpl context = new TaskAttemptContextImpl(jobConf,
                    TaskAttemptID.forName("attempt_200707121733_0001_m_000000_0"));
            IOException e = assertThrows(IOException.class, () -> PathOutputCommitterFactory.createCommitter(output, context));
            assertTrue(e.getMessage().contains("would not be sealed") && e.getMessage().contains("fs.s3a.committer.name=magic"),
                    e.getMessage());
        }
    }
}
