package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealpipeAesCtrCryptoCodec;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringTokenizer;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * MapReduce's encrypted intermediate data ({@code mapreduce.job.encrypted-intermediate-data}) on
 * sealpipe's codec: a word count run by the {@code LocalJobRunner} over generated text, with
 * enough map output and a small enough sort buffer that every map spills several times and merges
 * its spills in several passes (each spill, merge and shuffle read goes through the codec), and
 * two reducers. The same job without encryption must give the same output, and both must give
 * the counts of the generated text. sealpipe's codec is the only AES-CTR codec configured in
 * both runs: it chooses its engine (and logs so) in the encrypted run only.
 */
class EncryptedIntermediateDataTest {
    private static final String CODEC_CLASSES =
            CommonConfigurationKeysPublic.HADOOP_SECURITY_CRYPTO_CODEC_CLASSES_AES_CTR_NOPADDING_KEY;
    private static final String SEALPIPE_CODEC = SealpipeAesCtrCryptoCodec.class.getName();
    private static final int INPUT_FILES = 4;
    private static final int INPUT_FILE_BYTES = 1 << 20;

    private static Path base;
    private static Path input;
    private static Map<String, Long> expected;

    @BeforeAll
    static void writeInput() throws IOException {
        Logs.install();
        base = Path.of("target", "mapreduce").toAbsolutePath();
        TestFiles.deleteRecursively(base);
        input = Files.createDirectories(base.resolve("input"));
        expected = new TreeMap<>();
        for (int f = 0; f < INPUT_FILES; f++) {
            Random random = new Random(f);
            long written = 0;
            try (BufferedWriter out = Files.newBufferedWriter(input.resolve("part-" + f + ".txt"), StandardCharsets.UTF_8)) {
                while (written < INPUT_FILE_BYTES) {
                    StringBuilder line = new StringBuilder();
                    for (int w = 0; w < 12; w++) {
                        // Skewed: a few words very often, many rarely (a word count's usual shape).
                        String word = "w" + (int) (Math.pow(random.nextDouble(), 3) * 50_000);
                        expected.merge(word, 1L, Long::sum);
                        line.append(w == 0 ? "" : " ").append(word);
                    }
                    out.write(line.append('\n').toString());
                    written += line.length();
                }
            }
        }
    }

    /** Emits (word, 1) for every word of a line. */
    public static class Words extends Mapper<LongWritable, Text, Text, IntWritable> {
        private static final IntWritable ONE = new IntWritable(1);
        private final Text word = new Text();

        @Override
        protected void map(LongWritable offset, Text line, Context context) throws IOException, InterruptedException {
            StringTokenizer words = new StringTokenizer(line.toString());
            while (words.hasMoreTokens()) {
                word.set(words.nextToken());
                context.write(word, ONE);
            }
        }
    }

    /** Adds up a word's ones. */
    public static final class Sum extends Reducer<Text, IntWritable, Text, LongWritable> {
        private final LongWritable total = new LongWritable();

        @Override
        protected void reduce(Text word, Iterable<IntWritable> ones, Context context) throws IOException, InterruptedException {
            long sum = 0;
            for (IntWritable one : ones) {
                sum += one.get();
            }
            total.set(sum);
            context.write(word, total);
        }
    }

    /** A local word-count job over {@link #input}, with only {@code codec} for AES-CTR. */
    private static Job wordCount(String name, boolean encrypted, String codec) throws IOException {
        Configuration conf = new Configuration();
        conf.set("mapreduce.framework.name", "local");
        conf.set(CommonConfigurationKeysPublic.FS_DEFAULT_NAME_KEY, "file:///");
        conf.set("hadoop.tmp.dir", base.resolve("tmp-" + name).toString());
        conf.set("mapreduce.cluster.local.dir", base.resolve("local-" + name).toString());
        conf.set(CODEC_CLASSES, codec);
        conf.setBoolean(MRJobConfig.MR_ENCRYPTED_INTERMEDIATE_DATA, encrypted);
        // A 1 MB sort buffer spills every map's output several times, and merging at most two
        // files at a time merges the spills in several passes, each written through the codec.
        conf.setInt(MRJobConfig.IO_SORT_MB, 1);
        conf.setInt(MRJobConfig.IO_SORT_FACTOR, 2);
        // Job.waitForCompletion asks every 5 s by default whether the job is done.
        conf.setInt(Job.COMPLETION_POLL_INTERVAL_KEY, 50);

        Job job = Job.getInstance(conf, "word count, " + name);
        job.setMapperClass(Words.class);
        job.setReducerClass(Sum.class);
        job.setMapOutputKeyClass(Text.class);
        job.setMapOutputValueClass(IntWritable.class);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(LongWritable.class);
        job.setNumReduceTasks(2);
        FileInputFormat.addInputPath(job, new org.apache.hadoop.fs.Path(input.toUri()));
        FileOutputFormat.setOutputPath(job, new org.apache.hadoop.fs.Path(base.resolve("output-" + name).toUri()));
        return job;
    }

    /** The reducers' output, as word to count, checking that no word is in two parts. */
    private static Map<String, Long> output(String name) throws IOException {
        Map<String, Long> counts = new TreeMap<>();
        List<Path> parts;
        try (Stream<Path> files = Files.list(base.resolve("output-" + name))) {
            parts = files.filter(p -> p.getFileName().toString().startsWith("part-r-")).sorted().toList();
        }
        assertEquals(2, parts.size(), "one part per reducer: " + parts);
        for (Path part : parts) {
            for (String line : Files.readAllLines(part, StandardCharsets.UTF_8)) {
                String[] wordCount = line.split("\t");
                assertEquals(null, counts.put(wordCount[0], Long.parseLong(wordCount[1])), "twice: " + line);
            }
        }
        return counts;
    }

    /**
     * The same counts with and without encryption. Hadoop makes no codec in the job without
     * encryption, and sealpipe's codec (the only one configured) again and again in the job with
     * it, where sealpipe chooses its engine.
     */
    @Test
    void aWordCountCountsTheSameWithItsIntermediateDataEncryptedBySealpipe() throws Exception {
        int mark = Logs.mark();
        Job plain = wordCount("plain", false, SEALPIPE_CODEC);
        assertTrue(plain.waitForCompletion(false), "the job without encryption failed");
        List<Logs.Line> logged = Logs.since(mark);
        assertEquals(0, Logs.codecsMade(logged, SEALPIPE_CODEC), "sealpipe codecs made in the job without encryption");
        assertEquals(List.of(), Logs.sealpipe(logged), "sealpipe logged in the job without encryption");
        assertEquals(expected, output("plain"));

        mark = Logs.mark();
        Job encrypted = wordCount("encrypted", true, SEALPIPE_CODEC);
        assertTrue(encrypted.waitForCompletion(false), "the job with encrypted intermediate data failed");
        List<Logs.Line> loggedEncrypted = Logs.since(mark);
        long made = Logs.codecsMade(loggedEncrypted, SEALPIPE_CODEC);
        // Each map spills at least twice (see the counters below) and each reducer reads every map's output.
        assertTrue(made >= 2L * INPUT_FILES, made + " sealpipe codecs made in the job with encrypted intermediate data");
        assertTrue(Logs.engineChosen(loggedEncrypted),
                () -> "sealpipe chose no engine in the job with encrypted intermediate data: " + Logs.sealpipe(loggedEncrypted));
        assertEquals(expected, output("encrypted"));

        for (Job job : List.of(plain, encrypted)) {
            long mapOutput = job.getCounters().findCounter(TaskCounter.MAP_OUTPUT_RECORDS).getValue();
            long spilled = job.getCounters().findCounter(TaskCounter.SPILLED_RECORDS).getValue();
            assertEquals(expected.values().stream().mapToLong(Long::longValue).sum(), mapOutput, job.getJobName());
            // Each record is spilled once by its map and once more by every merge pass that takes
            // it: more than twice (once in the map, once in the reduce) means spills were merged.
            assertTrue(spilled > 2 * mapOutput, job.getJobName() + ": " + spilled + " records spilled of " + mapOutput);
        }
    }

    /**
     * A job with encrypted intermediate data whose only codec class does not load fails at its
     * first spill, with a NullPointerException in Hadoop's {@code CryptoUtils} (Hadoop 3.4 does
     * not check for a missing codec there): it does not write the intermediate data in the clear.
     */
    @Test
    void aJobWithEncryptedIntermediateDataAndNoCodecThatLoadsFails() throws Exception {
        String missing = "io.sealpipe.hadoop.NoSuchCodec";
        int mark = Logs.mark();
        Job job = wordCount("no-codec", true, missing);
        assertFalse(job.waitForCompletion(false), "the job without a codec succeeded");
        // The LocalJobRunner marks the job failed before it logs why, in its own thread, and
        // keeps the cause nowhere else (no failure info, diagnostics or completion events).
        List<Logs.Line> logged = Logs.awaitSince(mark, Logs::jobRunnerFailure, Duration.ofSeconds(60),
                "the LocalJobRunner's warning with the exception that failed the job");
        assertTrue(Logs.codecMissing(logged, missing), "Hadoop did not say the codec class is missing");
        List<Throwable> failures = logged.stream().map(Logs.Line::thrown).filter(t -> t != null).toList();
        assertTrue(failures.stream().anyMatch(EncryptedIntermediateDataTest::missingCodec),
                () -> "the job failed, but not for want of a codec: " + failures);
        assertFalse(Files.exists(base.resolve("output-no-codec").resolve("_SUCCESS")));
    }

    /** Whether {@code failure} was caused by Hadoop's CryptoUtils finding no codec (a null one). */
    private static boolean missingCodec(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof NullPointerException && t.getStackTrace().length > 0
                    && t.getStackTrace()[0].getClassName().equals("org.apache.hadoop.mapreduce.CryptoUtils")) {
                return true;
            }
        }
        return false;
    }
}
