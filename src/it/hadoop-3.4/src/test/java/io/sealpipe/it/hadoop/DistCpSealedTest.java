package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.mapreduce.Cluster;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.tools.DistCp;
import org.apache.hadoop.tools.DistCpConstants;
import org.apache.hadoop.tools.mapred.CopyMapper;
import org.apache.hadoop.util.ToolRunner;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * DistCp (hadoop-distcp 3.4.1) between {@code hdfs://} and {@code shdfs://} ({@link
 * SealedFileSystem} over the same HDFS) on the JVM's {@link YarnCluster} (under {@code /plain},
 * {@code /sealed}, {@code /restored} and {@code /interrupted} on its HDFS): its copy tasks are YARN
 * containers that have sealpipe only from {@code -libjars}, and read the key from a JCEKS
 * keystore named in the job's configuration. A plain tree of {@value #FILES} files and more (0
 * bytes to 40 MiB, across HDFS's 1 MiB blocks and sealpipe's 16 KiB chunks, in nested
 * directories, with an empty one) is copied into sealed files with DistCp's default checks
 * (lengths and checksums compared: no {@code -skipcrccheck}), then copied again with {@code
 * -update} (nothing copied), then back out to plain files. Every file equals its source byte for
 * byte and every stored file is one sealed message that {@link GcmStreams} decrypts. A copy whose
 * container is killed while it writes a 40 MiB file leaves no file that reads as a valid shorter
 * one, and completes on the task's next attempt.
 */
@Tag("cluster")
@ExtendWith(YarnCluster.Shared.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DistCpSealedTest {
    private static final String SCHEME = "shdfs";
    private static final String KEY = "data";
    private static final int MiB = 1024 * 1024;
    private static final int FILES = 200;
    private static final String TMP_PREFIX = ".distcp.tmp.";

    private static YarnCluster cluster;
    /** The YARN cluster's jobs, as a client sees them. */
    private static Cluster jobs;
    private static DistributedFileSystem hdfs;
    private static URI keystore;
    /** shdfs over the cluster, a file system of its own (not the one DistCp's client shares). */
    private static FileSystem sealed;
    /** Relative path of every plain file to its length. */
    private static final Map<String, Long> SOURCES = new TreeMap<>();

    @BeforeAll
    static void writeTree(YarnCluster shared) throws IOException, NoSuchAlgorithmException {
        cluster = shared;
        hdfs = cluster.hdfs();
        jobs = new Cluster(cluster.jobConf());
        keystore = URI.create("jceks://file" + cluster.base().resolve("keys.jceks"));
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        try {
            KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
            options.setBitLength(256);
            provider.createKey(KEY, options);
            provider.flush();
        } finally {
            provider.close();
        }
        sealed = FileSystem.newInstance(URI.create(SCHEME + "://" + cluster.authority() + "/"), conf());
        assertInstanceOf(SealedFileSystem.class, sealed);

        // Sizes at the edges of chunks (16 KiB), blocks (1 MiB) and a large file, then many small
        // files of skewed sizes, spread over nested directories.
        List<Long> sizes = new ArrayList<>(List.of(0L, 1L, 100L, 16_383L, 16_384L, 16_385L, 3 * 16_384L + 7, MiB - 1L,
                (long) MiB, MiB + 1L, 5L * MiB + 3));
        Random random = new Random(27);
        while (sizes.size() < FILES) {
            sizes.add((long) (Math.pow(random.nextDouble(), 4) * 256 * 1024));
        }
        for (int i = 0; i < sizes.size(); i++) {
            String dir = i < 11 ? "edges" : "d" + (i % 5) + (i % 3 == 0 ? "" : "/e" + (i % 3)) + (i % 7 == 0 ? "/f" : "");
            write("/plain/" + dir + "/file-" + i, sizes.get(i), i);
        }
        // The big file and two others in a directory of their own, which the interrupted copy takes.
        write("/plain/big/large", 40L * MiB, 1000);
        write("/plain/big/medium", 3L * MiB + 17, 1001);
        write("/plain/big/empty", 0, 1002);
        assertTrue(hdfs.mkdirs(new Path("/plain/empty/nested")));
        assertTrue(SOURCES.size() >= FILES, SOURCES.size() + " files");
    }

    @AfterAll
    static void closeClients() throws IOException {
        try {
            if (sealed != null) {
                sealed.close();
            }
        } finally {
            if (jobs != null) {
                jobs.close();
            }
        }
    }

    /** The cluster's job configuration with shdfs over hdfs, its key in {@link #keystore}. */
    private static Configuration conf() {
        Configuration conf = cluster.jobConf();
        conf.set("fs." + SCHEME + ".impl", SealedFileSystem.class.getName());
        conf.set(SealedFileSystem.wrapsKey(SCHEME), "hdfs");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, keystore.toString());
        conf.set(SealedFileSystem.KEY_NAME, KEY);
        return conf;
    }

    private static void write(String path, long size, long seed) throws IOException {
        Random random = new Random(seed);
        byte[] buffer = new byte[64 * 1024];
        try (FSDataOutputStream out = hdfs.create(new Path(path))) {
            for (long left = size; left > 0; left -= buffer.length) {
                random.nextBytes(buffer);
                out.write(buffer, 0, (int) Math.min(left, buffer.length));
            }
        }
        SOURCES.put(path.substring("/plain/".length()), size);
    }

    private static Path sealedPath(String path) {
        return new Path(SCHEME, cluster.authority(), path);
    }

    private static Path plainPath(String path) {
        return new Path("hdfs", cluster.authority(), path);
    }

    /** DistCp's exit code, and the job it submitted (null if none). */
    private record Run(int exit, Job job) {}

    /**
     * Runs DistCp as {@code hadoop distcp -libjars sealpipe.jar ARGS} does ({@code
     * DistCp.main}: ToolRunner with the generic options, on a configuration with DistCp's
     * defaults), and finds the job it submitted on the cluster; the job is finished unless
     * {@code -async} is among the arguments.
     */
    private static Run distcp(String... args) throws Exception {
        Configuration conf = conf();
        conf.addResource("distcp-default.xml");
        List<String> all = new ArrayList<>(YarnCluster.libjars());
        all.addAll(List.of(args));
        Set<JobID> before = Arrays.stream(jobs.getAllJobStatuses()).map(JobStatus::getJobID).collect(Collectors.toSet());
        int exit = ToolRunner.run(conf, new DistCp(conf, null), all.toArray(String[]::new));
        List<JobID> submitted = Arrays.stream(jobs.getAllJobStatuses()).map(JobStatus::getJobID)
                .filter(id -> !before.contains(id)).toList();
        assertTrue(submitted.size() <= 1, () -> "jobs submitted by one DistCp: " + submitted);
        return new Run(exit, submitted.isEmpty() ? null : jobs.getJob(submitted.get(0)));
    }

    /** A successful DistCp's job. */
    private static Job copied(Run run) {
        assertEquals(DistCpConstants.SUCCESS, run.exit(), "DistCp's exit code");
        assertTrue(run.job() != null, "DistCp submitted no job");
        return run.job();
    }

    private static long counter(Job job, CopyMapper.Counter counter) throws IOException {
        return job.getCounters().findCounter(counter).getValue();
    }

    /** The plain files of a copied tree: relative path to plaintext length, as {@code fs} lists them. */
    private static Map<String, Long> files(FileSystem fs, Path root) throws IOException {
        Map<String, Long> files = new TreeMap<>();
        String prefix = fs.makeQualified(root).toUri().getPath() + "/";
        RemoteIterator<LocatedFileStatus> it = fs.listFiles(root, true);
        while (it.hasNext()) {
            LocatedFileStatus status = it.next();
            files.put(status.getPath().toUri().getPath().substring(prefix.length()), status.getLen());
        }
        return files;
    }

    /** Whether the two streams give the same bytes to their ends; closes both. */
    private static boolean sameContent(InputStream a, InputStream b) throws IOException {
        try (a; b) {
            byte[] x = new byte[256 * 1024];
            byte[] y = new byte[256 * 1024];
            while (true) {
                int n = a.readNBytes(x, 0, x.length);
                int m = b.readNBytes(y, 0, y.length);
                if (n != m || !Arrays.equals(x, 0, n, y, 0, m)) {
                    return false;
                }
                if (n == 0) {
                    return true;
                }
            }
        }
    }

    /**
     * Every source file is under {@code root} through shdfs with the same length and bytes, and
     * its stored file (through hdfs) is a sealed message of the right length that GcmStreams
     * decrypts, under the key's current version, to the same bytes; and nothing else is there.
     */
    private static void assertSealedCopy(String root) throws IOException {
        assertEquals(SOURCES, files(sealed, sealedPath(root)), "the sealed tree's files and lengths");
        assertTrue(sealed.getFileStatus(sealedPath(root + "/empty/nested")).isDirectory(), "the empty directory");
        GcmStreams key = currentKey();
        try {
            for (Map.Entry<String, Long> file : SOURCES.entrySet()) {
                String name = file.getKey();
                assertTrue(sameContent(hdfs.open(plainPath("/plain/" + name)), sealed.open(sealedPath(root + "/" + name))),
                        () -> name + " through shdfs");
                Path stored = plainPath(root + "/" + name);
                assertEquals(GcmStreams.ciphertextLength(file.getValue()), hdfs.getFileStatus(stored).getLen(), name + " stored");
                assertTrue(sameContent(hdfs.open(plainPath("/plain/" + name)), key.decrypt(hdfs.open(stored))),
                        () -> name + ": its stored file through GcmStreams");
            }
        } finally {
            key.destroy();
        }
    }

    private static GcmStreams currentKey() throws IOException {
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        try {
            return GcmStreams.builder().key(provider.getCurrentKey(KEY).getMaterial()).build();
        } finally {
            provider.close();
        }
    }

    /** The containers of {@code job} that copied files, each of which must have logged sealpipe's engine. */
    private static void assertSealpipeRanInEveryCopyTask(Job job) {
        String appId = job.getJobID().toString().replace("job_", "application_");
        Map<String, String> copiers = new TreeMap<>();
        cluster.containerLogs(appId).forEach((container, log) -> {
            if (log.contains("RetriableFileCopyCommand: Copying ")) {
                copiers.put(container, log);
            }
        });
        assertFalse(copiers.isEmpty(), "no container of " + appId + " copied a file");
        copiers.forEach((container, log) -> assertTrue(log.contains(": " + Logs.ENGINE_LINE),
                () -> container + " copied without sealpipe's engine line: " + YarnCluster.lines(log, "io.sealpipe")));
    }

    /**
     * Into sealed files with DistCp's defaults: no {@code -skipcrccheck}, since shdfs offers no
     * checksum (DistCp then compares lengths only, and shdfs lists plaintext lengths), and block
     * size, owner, group, permission and times preserved ({@code -pbugpt}), which shdfs passes to
     * and from the stored files.
     */
    @Test
    @Order(1)
    void copiesAPlainTreeIntoSealedFiles() throws Exception {
        Job job = copied(distcp("-pbugpt", "-m", "4", plainPath("/plain").toString(), sealedPath("/sealed").toString()));
        assertTrue(job.isSuccessful(), job::toString);
        assertEquals(SOURCES.size(), counter(job, CopyMapper.Counter.COPY));
        assertEquals(SOURCES.values().stream().mapToLong(Long::longValue).sum(), counter(job, CopyMapper.Counter.BYTESCOPIED));
        assertSealedCopy("/sealed");
        assertSealpipeRanInEveryCopyTask(job);
        for (String name : List.of("edges/file-5", "big/large")) {
            FileStatus source = hdfs.getFileStatus(plainPath("/plain/" + name));
            FileStatus target = sealed.getFileStatus(sealedPath("/sealed/" + name));
            assertEquals(source.getModificationTime(), target.getModificationTime(), name + ": -pt");
            assertEquals(source.getPermission(), target.getPermission(), name + ": -pp");
            assertEquals(source.getBlockSize(), target.getBlockSize(), name + ": -pb");
        }
    }

    /**
     * {@code -update} over the copy: without checksums DistCp skips a file of the same length
     * whose copy is not older than the source (distcp.update.modification.time, on by default),
     * so nothing is copied again.
     */
    @Test
    @Order(2)
    void anUpdateOfTheSealedCopyCopiesNothing() throws Exception {
        Job job = copied(distcp("-update", "-pbugpt", "-m", "4", plainPath("/plain").toString(), sealedPath("/sealed").toString()));
        assertTrue(job.isSuccessful(), job::toString);
        assertEquals(0, counter(job, CopyMapper.Counter.BYTESCOPIED));
        assertEquals(0, counter(job, CopyMapper.Counter.COPY));
        assertTrue(counter(job, CopyMapper.Counter.SKIP) >= SOURCES.size(), () -> "skipped: " + job);
        assertSealedCopy("/sealed");
    }

    /** Back out of the sealed files into plain ones: the same bytes as the original tree. */
    @Test
    @Order(3)
    void copiesTheSealedTreeBackOutToPlainFiles() throws Exception {
        Job job = copied(distcp("-pbugpt", "-m", "4", sealedPath("/sealed").toString(), plainPath("/restored").toString()));
        assertTrue(job.isSuccessful(), job::toString);
        assertEquals(SOURCES, files(hdfs, plainPath("/restored")));
        for (String name : SOURCES.keySet()) {
            assertTrue(sameContent(hdfs.open(plainPath("/plain/" + name)), hdfs.open(plainPath("/restored/" + name))),
                    () -> name + " restored");
        }
        assertSealpipeRanInEveryCopyTask(job);
    }

    /**
     * ACLs and extended attributes are not passed through: DistCp refuses {@code -pa} and {@code
     * -px} with its exit codes for them before it submits a job, and copies nothing.
     */
    @Test
    @Order(4)
    void preservingAclsOrXattrsIsRefusedBeforeAnyCopy() throws Exception {
        Run acls = distcp("-pa", plainPath("/plain/big").toString(), sealedPath("/refused-acls").toString());
        assertEquals(DistCpConstants.ACLS_NOT_SUPPORTED, acls.exit(), "-pa");
        Run xattrs = distcp("-px", plainPath("/plain/big").toString(), sealedPath("/refused-xattrs").toString());
        assertEquals(DistCpConstants.XATTRS_NOT_SUPPORTED, xattrs.exit(), "-px");
        assertEquals(null, acls.job(), "-pa submitted a job");
        assertEquals(null, xattrs.job(), "-px submitted a job");
        for (String refused : List.of("/refused-acls", "/refused-xattrs")) {
            assertFalse(hdfs.exists(plainPath(refused)) && hdfs.listFiles(plainPath(refused), true).hasNext(), refused);
        }
    }

    /**
     * One copy task's container killed (SIGKILL) while it writes the 40 MiB file (throttled, so
     * that it writes for seconds), once more than 4 MiB of it are stored: at that moment every
     * file under the target, DistCp's temporary files included, either reads whole and equals its
     * source or fails to read; the killed attempt's temporary file fails. The task's next attempt
     * then copies everything, and no temporary file is left.
     */
    @Test
    @Order(5)
    void aKilledCopyTaskLeavesNoFileThatReadsAsAValidShorterOne() throws Exception {
        Job job = copied(distcp("-async", "-m", "1", "-bandwidth", "8", plainPath("/plain/big").toString(),
                sealedPath("/interrupted").toString()));
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        FileStatus partial = null;
        while (partial == null) {
            assertTrue(System.nanoTime() < deadline, "no temporary file of more than 4 MiB within 5 minutes");
            assertFalse(job.isComplete(), "the copy finished before a temporary file of 4 MiB was seen");
            if (hdfs.exists(plainPath("/interrupted"))) {
                partial = Arrays.stream(hdfs.listStatus(plainPath("/interrupted")))
                        .filter(s -> s.getPath().getName().startsWith(TMP_PREFIX) && s.getLen() > 4L * MiB)
                        .findFirst()
                        .orElse(null);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        // .distcp.tmp.<attempt id>.<time>
        String attempt = partial.getPath().getName().substring(TMP_PREFIX.length()).split("\\.")[0];
        assertTrue(attempt.startsWith("attempt_"), attempt);
        List<ProcessHandle> children = ProcessHandle.allProcesses()
                .filter(p -> p.info().command().map(c -> c.endsWith("/java")).orElse(false)
                        && p.info().commandLine().map(c -> c.contains("org.apache.hadoop.mapred.YarnChild")
                                && c.contains(attempt)).orElse(false))
                .toList();
        assertEquals(1, children.size(), () -> "the YarnChild of " + attempt + ": " + children);
        ProcessHandle child = children.get(0);
        assertTrue(child.destroyForcibly(), "SIGKILL to " + child.pid());
        child.onExit().get(60, TimeUnit.SECONDS);

        Path killedTemp = sealedPath("/interrupted/" + partial.getPath().getName());
        // The file is still there, with what the task stored before it died: it fails to read, not for being gone.
        Path killedStored = plainPath("/interrupted/" + partial.getPath().getName());
        assertTrue(hdfs.exists(killedStored) && hdfs.getFileStatus(killedStored).getLen() > 4L * MiB,
                () -> "the killed attempt's temporary file is gone or shorter than what was seen: " + killedStored);
        assertFalse(readsWhole(killedTemp).isPresent(), "the killed attempt's temporary file read as a whole file");
        assertNoValidShorterFile("/interrupted");

        deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (!job.isComplete()) {
            assertTrue(System.nanoTime() < deadline, "the copy did not finish within 10 minutes of the kill");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        assertTrue(job.isSuccessful(), () -> "the copy failed after the kill: " + job);
        Map<String, Long> big = SOURCES.entrySet().stream().filter(e -> e.getKey().startsWith("big/"))
                .collect(Collectors.toMap(e -> e.getKey().substring("big/".length()), Map.Entry::getValue, (a, b) -> a, TreeMap::new));
        assertEquals(big, files(sealed, sealedPath("/interrupted")), "the files after the task's next attempt (no temporary file left)");
        for (String name : big.keySet()) {
            assertTrue(sameContent(hdfs.open(plainPath("/plain/big/" + name)), sealed.open(sealedPath("/interrupted/" + name))), name);
        }
        assertNoValidShorterFile("/interrupted");
    }

    /** The plaintext of {@code path} read through shdfs to its end, or empty if any read fails. */
    private static Optional<byte[]> readsWhole(Path path) {
        try (InputStream in = sealed.open(path)) {
            return Optional.of(in.readAllBytes());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * Every file under {@code root} (through shdfs) either fails to read, or reads whole and
     * equals its source: for one of DistCp's temporary files, whose source its name does not
     * say, some source file of the same length.
     */
    private static void assertNoValidShorterFile(String root) throws IOException {
        List<String> checked = new ArrayList<>();
        for (FileStatus status : hdfs.listStatus(plainPath(root))) {
            String name = status.getPath().getName();
            Optional<byte[]> read = readsWhole(sealedPath(root + "/" + name));
            if (read.isEmpty()) {
                checked.add(name + ": fails");
                continue;
            }
            byte[] plaintext = read.get();
            List<String> candidates = name.startsWith(TMP_PREFIX)
                    ? SOURCES.keySet().stream().filter(s -> s.startsWith("big/")).toList()
                    : List.of("big/" + name);
            boolean equal = false;
            for (String candidate : candidates) {
                if (SOURCES.get(candidate) == plaintext.length) {
                    try (InputStream source = hdfs.open(plainPath("/plain/" + candidate))) {
                        equal |= Arrays.equals(source.readAllBytes(), plaintext);
                    }
                }
            }
            assertTrue(equal, () -> name + " reads as " + plaintext.length + " bytes that are not its source's");
            checked.add(name + ": whole");
        }
        assertFalse(checked.isEmpty(), "nothing under " + root);
    }
}
