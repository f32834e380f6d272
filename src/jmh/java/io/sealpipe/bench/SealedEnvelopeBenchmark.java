package io.sealpipe.bench;

import io.sealpipe.hadoop.SealedFileSystem;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What envelope mode costs per file against direct mode: creating, writing and closing one
 * sealed file, and opening and reading it whole, through {@link SealedFileSystem} ({@code sfile}
 * over Hadoop's local file system, a JCEKS keystore through Hadoop's default crypto extension),
 * with the default data-key bounds (one data key for every file of the run, kept for reading: the
 * steady state of a job, whose KMS calls are counted elsewhere). An envelope file has 512 bytes
 * more, written and read in the same request as its header.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="SealedEnvelopeBenchmark -rf json -rff target/jmh-sealed-envelope.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class SealedEnvelopeBenchmark {
    @Param({"direct", "envelope"})
    public String mode;

    /** Plaintext bytes per file. */
    @Param({"4096", "1048576"})
    public int size;

    private Path dir;
    private FileSystem sealed;
    private byte[] plain;
    private byte[] buffer;
    private int round;

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("sealpipe-sealed-envelope");
        Configuration conf = SealedFileSystemBenchmark.SealedSetup.configuration(dir);
        conf.set(SealedFileSystem.KEY_MODE, mode);
        sealed = FileSystem.get(URI.create("sfile:///"), conf);
        plain = Fixtures.bytes(size, 5);
        buffer = new byte[64 << 10];
        try (OutputStream out = sealed.create(path("in"), true)) {
            out.write(plain);
        }
        long stored = Files.size(dir.resolve("in"));
        long expected = io.sealpipe.gcm.GcmStreams.ciphertextLength(size) + (mode.equals("envelope") ? 512 : 0);
        if (stored != expected) {
            throw new IllegalStateException(mode + ": stored " + stored + " bytes, not " + expected);
        }
    }

    private org.apache.hadoop.fs.Path path(String name) {
        return new org.apache.hadoop.fs.Path("sfile://" + dir.resolve(name));
    }

    @Benchmark
    public long createAndWrite() throws IOException {
        try (OutputStream out = sealed.create(path("out" + (round++ & 7)), true)) {
            out.write(plain);
        }
        return round;
    }

    @Benchmark
    public long openAndRead() throws IOException {
        long total = 0;
        try (InputStream in = sealed.open(path("in"))) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                total += n;
            }
        }
        if (total != size) {
            throw new IllegalStateException("read " + total + " bytes of " + size);
        }
        return total;
    }

    @TearDown
    public void tearDown() throws IOException {
        sealed.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
