package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealpipeAesCtrCryptoCodec;
import io.sealpipe.it.net.Listeners;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.util.GenericOptionsParser;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MapReduce's encrypted intermediate data on sealpipe's codec in YARN containers: the word count
 * of {@link EncryptedIntermediateDataTest} (its mapper and reducer) on the JVM's {@link YarnCluster},
 * its input and output on HDFS ({@code /input}, {@code /output-*}), each map and reduce task a {@code YarnChild} JVM of its own whose
 * class path has sealpipe only because the job ships it ({@code -libjars}). Every map spills
 * several times and the reducers fetch the map output from the NodeManagers' shuffle service.
 * The same job without encryption gives the same output, both give the counts computed here, and
 * the containers' own logs show that every map and reduce task of the encrypted job made
 * sealpipe's codec and that sealpipe chose its engine there, and that no task of the plain job did.
 * Without {@code -libjars} the containers cannot load sealpipe's codec.
 */
@Tag("cluster")
@ExtendWith(YarnCluster.Shared.class)
class YarnEncryptedIntermediateDataTest {
    private static final String SEALPIPE_CODEC = SealpipeAesCtrCryptoCodec.class.getName();
    private static final String CODEC_LINE = Logs.CODEC_USED + SEALPIPE_CODEC + ".";
    private static final int INPUT_FILES = 3;
    private static final int INPUT_FILE_BYTES = 1 << 20;
    private static final int REDUCERS = 2;

    private static YarnCluster cluster;
    private static FileSystem hdfs;
    private static Map<String, Long> expected;

    @BeforeAll
    static void writeInput(YarnCluster shared) throws IOException {
        cluster = shared;
        hdfs = cluster.hdfs();
        expected = new TreeMap<>();
        for (int f = 0; f < INPUT_FILES; f++) {
            Random random = new Random(f);
            long written = 0;
            try (Writer out = new OutputStreamWriter(hdfs.create(new Path("/input/part-" + f + ".txt")), StandardCharsets.UTF_8)) {
                while (written < INPUT_FILE_BYTES) {
                    StringBuilder line = new StringBuilder();
                    for (int w = 0; w < 12; w++) {
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

    /** The word count on the cluster, sealpipe's jar shipped with -libjars and its codec the only AES-CTR one. */
    private static Job wordCount(String name, boolean encrypted, boolean libjars) throws IOException {
        Configuration conf = cluster.jobConf();
        if (libjars) {
            // As `hadoop jar job.jar ... -libjars sealpipe.jar` does: tmpjars, uploaded with the
            // job and put on its tasks' class path.
            new GenericOptionsParser(conf, YarnCluster.libjars().toArray(String[]::new));
        }
        conf.set(CommonConfigurationKeysPublic.HADOOP_SECURITY_CRYPTO_CODEC_CLASSES_AES_CTR_NOPADDING_KEY, SEALPIPE_CODEC);
        conf.setBoolean(MRJobConfig.MR_ENCRYPTED_INTERMEDIATE_DATA, encrypted);
        // A 1 MB sort buffer spills every map's output several times, and merging at most two
        // files at a time merges the spills in several passes, each written through the codec.
        conf.setInt(MRJobConfig.IO_SORT_MB, 1);
        conf.setInt(MRJobConfig.IO_SORT_FACTOR, 2);

        Job job = Job.getInstance(conf, "word count on YARN, " + name);
        job.setJar(YarnCluster.testJobJar(YarnEncryptedIntermediateDataTest.class));
        job.setMapperClass(EncryptedIntermediateDataTest.Words.class);
        job.setReducerClass(EncryptedIntermediateDataTest.Sum.class);
        job.setMapOutputKeyClass(Text.class);
        job.setMapOutputValueClass(IntWritable.class);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(LongWritable.class);
        job.setNumReduceTasks(REDUCERS);
        FileInputFormat.addInputPath(job, new Path("/input"));
        FileOutputFormat.setOutputPath(job, new Path("/output-" + name));
        return job;
    }

    /** The reducers' output on HDFS, as word to count, checking that no word is in two parts. */
    private static Map<String, Long> output(String name) throws IOException {
        Map<String, Long> counts = new TreeMap<>();
        List<Path> parts = new ArrayList<>();
        for (FileStatus status : hdfs.listStatus(new Path("/output-" + name))) {
            if (status.getPath().getName().startsWith("part-r-")) {
                parts.add(status.getPath());
            }
        }
        assertEquals(REDUCERS, parts.size(), "one part per reducer: " + parts);
        for (Path part : parts) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(hdfs.open(part), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    String[] wordCount = line.split("\t");
                    assertEquals(null, counts.put(wordCount[0], Long.parseLong(wordCount[1])), "twice: " + line);
                }
            }
        }
        return counts;
    }

    /** The logs of the job's containers that match {@code marker}. */
    private static Map<String, String> taskLogs(Job job, Pattern marker) {
        String appId = job.getJobID().toString().replace("job_", "application_");
        Map<String, String> tasks = new TreeMap<>();
        cluster.containerLogs(appId).forEach((container, log) -> {
            if (marker.matcher(log).find()) {
                tasks.put(container, log);
            }
        });
        return tasks;
    }

    /**
     * {@link #taskLogs(Job, Pattern)} once {@code expected} containers have logged {@code marker},
     * or after two minutes: a task logs that it is done after telling the application master, so
     * a finished job's last containers may still be writing their logs.
     */
    private static Map<String, String> taskLogs(Job job, Pattern marker, int expected) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        Map<String, String> tasks = taskLogs(job, marker);
        while (tasks.size() < expected && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
            tasks = taskLogs(job, marker);
        }
        return tasks;
    }

    /** A map task that started: it logs the split it processes. */
    private static final Pattern MAP_STARTED = Pattern.compile("org\\.apache\\.hadoop\\.mapred\\.MapTask: Processing split");
    /** A successful map attempt (one per map; speculation is off). */
    private static final Pattern MAP_DONE = Pattern.compile("Task 'attempt_\\d+_\\d+_m_\\d+_\\d+' done\\.");
    /** A successful reduce attempt (one per reduce). */
    private static final Pattern REDUCE_DONE = Pattern.compile("Task 'attempt_\\d+_\\d+_r_\\d+_\\d+' done\\.");

    @Test
    void aWordCountInYarnContainersCountsTheSameWithItsIntermediateDataEncryptedBySealpipe() throws Exception {
        Job plain = wordCount("plain", false, true);
        assertTrue(plain.waitForCompletion(false), "the job without encryption failed");
        Job encrypted = wordCount("encrypted", true, true);
        assertTrue(encrypted.waitForCompletion(false), "the job with encrypted intermediate data failed");

        assertEquals(expected, output("plain"));
        assertEquals(expected, output("encrypted"));
        for (Job job : List.of(plain, encrypted)) {
            long mapOutput = job.getCounters().findCounter(TaskCounter.MAP_OUTPUT_RECORDS).getValue();
            long spilled = job.getCounters().findCounter(TaskCounter.SPILLED_RECORDS).getValue();
            long shuffled = job.getCounters().findCounter(TaskCounter.REDUCE_SHUFFLE_BYTES).getValue();
            assertEquals(expected.values().stream().mapToLong(Long::longValue).sum(), mapOutput, job.getJobName());
            // Each record is spilled once by its map and once more by every merge pass that takes
            // it: more than twice (once in the map, once in the reduce) means spills were merged.
            assertTrue(spilled > 2 * mapOutput, job.getJobName() + ": " + spilled + " records spilled of " + mapOutput);
            assertTrue(shuffled > 0, job.getJobName() + ": nothing shuffled");
        }

        Map<String, String> plainMaps = taskLogs(plain, MAP_DONE, INPUT_FILES);
        Map<String, String> plainReduces = taskLogs(plain, REDUCE_DONE, REDUCERS);
        assertEquals(INPUT_FILES, plainMaps.size(), () -> "map containers of the plain job: " + plainMaps.keySet());
        assertEquals(REDUCERS, plainReduces.size(), () -> "reduce containers of the plain job: " + plainReduces.keySet());
        for (String log : cluster.containerLogs(plain.getJobID().toString().replace("job_", "application_")).values()) {
            assertEquals(List.of(), YarnCluster.lines(log, SEALPIPE_CODEC), "the plain job's containers made no sealpipe codec");
            assertEquals(List.of(), YarnCluster.lines(log, Logs.ENGINE_LINE), "sealpipe chose no engine in the plain job");
        }

        Map<String, String> maps = taskLogs(encrypted, MAP_DONE, INPUT_FILES);
        Map<String, String> reduces = taskLogs(encrypted, REDUCE_DONE, REDUCERS);
        assertEquals(INPUT_FILES, maps.size(), () -> "map containers of the encrypted job: " + maps.keySet());
        assertEquals(REDUCERS, reduces.size(), () -> "reduce containers of the encrypted job: " + reduces.keySet());
        Map<String, String> tasks = new TreeMap<>(maps);
        tasks.putAll(reduces);
        tasks.forEach((container, log) -> {
            List<String> codecs = YarnCluster.lines(log, CODEC_LINE);
            // A map makes a codec for each spill and each merge pass; a reduce for each map output it fetches.
            assertTrue(codecs.size() >= (maps.containsKey(container) ? 2 : INPUT_FILES),
                    container + " made " + codecs.size() + " sealpipe codecs");
            List<String> engine = YarnCluster.lines(log, "io.sealpipe");
            assertTrue(engine.stream().anyMatch(l -> l.contains(": " + Logs.ENGINE_LINE)),
                    () -> container + ": sealpipe chose no engine: " + engine);
            assertEquals(List.of(), YarnCluster.lines(log, "Crypto codec " + SEALPIPE_CODEC + " not found"), container);
        });
    }

    /**
     * Where the cluster's servers listen, seen by the map tasks while the job runs: every listener
     * of the test JVM and of the processes it started, the application master among them, is on
     * 127.0.0.1, but for the ones Hadoop 3.4.1 binds to the wildcard address in its code (see
     * {@link YarnCluster#assertListenersOnLoopback}): the NodeManagers' shuffle ports, and the
     * application master's client RPC, task RPC and web ports, each found in its log. Those are
     * on the loopback only too: the processes run in a network namespace whose only interface is
     * the loopback, which the tasks check in their own JVMs.
     */
    @Test
    void everyServerListensOnTheLoopbackOnly() throws Exception {
        // Only this job's application master may hold the wildcard ports the maps see.
        YarnCluster.awaitNoApplicationMaster();
        Job job = wordCount("listeners", true, true);
        job.setMapperClass(WordsSeeingListeners.class);
        job.getConfiguration().setLong(LISTENERS_OF, ProcessHandle.current().pid());
        assertTrue(job.waitForCompletion(false), "the job failed");

        Map<String, String> maps = taskLogs(job, MAP_DONE, INPUT_FILES);
        assertEquals(INPUT_FILES, maps.size(), () -> "map containers: " + maps.keySet());
        for (String log : maps.values()) {
            assertEquals(List.of(INTERFACES_LINE + "[]"), YarnCluster.lines(log, INTERFACES_LINE).stream()
                    .map(l -> l.substring(l.indexOf(INTERFACES_LINE))).toList(), "a task's network: only the loopback");
            List<Listeners.Listener> seen = new ArrayList<>();
            for (String line : YarnCluster.lines(log, LISTENER_LINE)) {
                String[] fields = line.substring(line.indexOf(LISTENER_LINE) + LISTENER_LINE.length()).split(" ", 4);
                seen.add(new Listeners.Listener(Long.parseLong(fields[2]), fields[3], fields[0], Integer.parseInt(fields[1])));
            }
            assertTrue(seen.stream().anyMatch(l -> l.inProcess(YarnCluster.MR_APP_MASTER)),
                    () -> "a map saw no listener of the application master: " + seen);
            cluster.assertListenersOnLoopback(seen, appMasterPorts(job));
        }
    }

    /** The application master's client RPC port, its task RPC port and its web port, from its log. */
    private static Set<Integer> appMasterPorts(Job job) {
        String appId = job.getJobID().toString().replace("job_", "application_");
        Map<String, String> appMaster = taskLogs(job, AM_STARTED);
        assertEquals(1, appMaster.size(), () -> "application master containers of " + appId + ": " + appMaster.keySet());
        String log = appMaster.values().iterator().next();
        Set<Integer> ports = new TreeSet<>();
        for (Pattern port : List.of(AM_CLIENT_PORT, AM_TASK_PORT, AM_WEB_PORT)) {
            Matcher found = port.matcher(log);
            assertTrue(found.find(), () -> "the application master did not log '" + port + "'");
            ports.add(Integer.parseInt(found.group(1)));
        }
        assertEquals(3, ports.size(), () -> "the application master's ports: " + ports);
        return ports;
    }

    private static final Pattern AM_STARTED = Pattern.compile("MRAppMaster: Created MRAppMaster for application ");
    private static final Pattern AM_CLIENT_PORT = Pattern.compile("MRClientService: Instantiated MRClientService at \\S+:(\\d+)");
    private static final Pattern AM_TASK_PORT = Pattern.compile("\\[IPC Server handler \\d+ on default port (\\d+)\\] org\\.apache\\.hadoop\\.mapred\\.TaskAttemptListenerImpl");
    private static final Pattern AM_WEB_PORT = Pattern.compile("WebApps: Web app mapreduce started at (\\d+)");

    /** The configuration key of the process whose listeners {@link WordsSeeingListeners} logs. */
    private static final String LISTENERS_OF = "sealpipe.it.listeners.of";
    private static final String LISTENER_LINE = "sealpipe-it listener: ";
    private static final String INTERFACES_LINE = "sealpipe-it network interfaces besides the loopback: ";

    /**
     * The word count's mapper that first logs the network interfaces of its JVM besides the
     * loopback ({@value #INTERFACES_LINE}), then, one line each, the listeners of the process that
     * {@value #LISTENERS_OF} names and of its descendants: {@value #LISTENER_LINE}, the address,
     * the port, the process id and its command line.
     */
    public static final class WordsSeeingListeners extends EncryptedIntermediateDataTest.Words {
        private static final Logger LOG = LoggerFactory.getLogger(WordsSeeingListeners.class);

        @Override
        protected void setup(Context context) {
            LOG.info(INTERFACES_LINE + Listeners.interfacesBesidesLoopback());
            for (Listeners.Listener l : Listeners.of(context.getConfiguration().getLong(LISTENERS_OF, -1))) {
                LOG.info(LISTENER_LINE + l.address() + " " + l.port() + " " + l.pid() + " " + l.command());
            }
        }
    }

    /**
     * The same encrypted job without {@code -libjars}: its containers have no sealpipe (so the
     * job above had it from {@code -libjars} only). A map logs that the codec class does not load
     * and fails at its first spill (Hadoop 3.4's CryptoUtils does not check for a missing codec);
     * the job fails and writes no output.
     */
    @Test
    void withoutLibjarsTheContainersHaveNoSealpipeAndTheJobFails() throws Exception {
        Job job = wordCount("no-libjars", true, false);
        job.getConfiguration().setInt(MRJobConfig.MAP_MAX_ATTEMPTS, 1);
        assertFalse(job.waitForCompletion(false), "the job without sealpipe's jar succeeded");
        Map<String, String> maps = taskLogs(job, MAP_STARTED);
        // The first map to spill fails the job (one attempt), and the others are killed, spilled or not.
        String missing = String.format(Logs.CODEC_MISSING, SEALPIPE_CODEC);
        assertTrue(maps.values().stream().anyMatch(log -> log.contains(missing)), () -> "no map logged '" + missing + "': " + maps);
        maps.forEach((container, log) -> assertEquals(List.of(), YarnCluster.lines(log, CODEC_LINE), container));
        assertFalse(hdfs.exists(new Path("/output-no-libjars/_SUCCESS")));
    }
}
