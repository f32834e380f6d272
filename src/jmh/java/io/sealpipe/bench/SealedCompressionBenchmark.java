package io.sealpipe.bench;

import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.TextLikeData;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
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
 * {@code sealpipe.fs.compress=snappy} against {@code none} on 64 MiB of text-like data (log lines,
 * about 1.7 × with Snappy) through {@link SealedFileSystem} over the local file system: a whole
 * file written or read in 64 KiB calls, and 4 KiB positioned reads at random offsets. The
 * secondary result {@code storedBytes} of {@code write} is the stored file's size (per
 * operation: divide by the operation count).
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="SealedCompressionBenchmark -rf json -rff target/jmh-sealed-compression.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 4, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class SealedCompressionBenchmark {
    static final int FILE = 64 << 20;
    static final int CALL = 64 << 10;
    static final int POSITIONED = 4096;

    @Param({"none", "snappy"})
    public String compress;

    private Path dir;
    private FileSystem sealed;
    private byte[] plain;
    private byte[] buffer;
    private byte[] small;
    private FSDataInputStream positioned;
    private long[] positions;
    private int next;
    private int round;

    /** The stored size of each file written, as a rate: divide by the operations. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Stored {
        public long storedBytes;

        @Setup(Level.Iteration)
        public void clear() {
            storedBytes = 0;
        }
    }

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("sealpipe-sealed-compression");
        Configuration conf = SealedFileSystemBenchmark.SealedSetup.configuration(dir);
        conf.set(SealedFileSystem.COMPRESS, compress);
        sealed = FileSystem.get(URI.create("sfile:///"), conf);
        plain = TextLikeData.generate(11, FILE);
        buffer = new byte[CALL];
        small = new byte[POSITIONED];
        try (OutputStream out = sealed.create(path("in"), true)) {
            out.write(plain);
        }
        try (InputStream in = sealed.open(path("in"))) {
            if (!Arrays.equals(plain, in.readAllBytes())) {
                throw new IllegalStateException(compress + ": the file does not read back as written");
            }
        }
        positioned = sealed.open(path("in"));
        SplittableRandom random = new SplittableRandom(9);
        positions = new long[1 << 16];
        for (int i = 0; i < positions.length; i++) {
            positions[i] = random.nextLong(FILE - POSITIONED);
        }
    }

    private org.apache.hadoop.fs.Path path(String name) {
        return new org.apache.hadoop.fs.Path("sfile://" + dir.resolve(name));
    }

    @Benchmark
    public long write(Stored stored) throws IOException {
        String name = "out" + (round++ & 1);
        try (OutputStream out = sealed.create(path(name), true)) {
            for (int at = 0; at < FILE; at += CALL) {
                out.write(plain, at, CALL);
            }
        }
        stored.storedBytes += Files.size(dir.resolve(name));
        return round;
    }

    @Benchmark
    public long read() throws IOException {
        long total = 0;
        try (InputStream in = sealed.open(path("in"))) {
            for (int n; (n = in.read(buffer, 0, CALL)) > 0; ) {
                total += n;
            }
        }
        if (total != FILE) {
            throw new IllegalStateException("read " + total + " bytes of " + FILE);
        }
        return total;
    }

    @Benchmark
    public byte positionedRead() throws IOException {
        positioned.readFully(positions[next++ & (positions.length - 1)], small);
        return small[0];
    }

    @TearDown
    public void tearDown() throws IOException {
        positioned.close();
        sealed.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
