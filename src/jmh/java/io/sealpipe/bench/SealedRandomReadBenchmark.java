package io.sealpipe.bench;

import io.sealpipe.hadoop.SealedFileSystem;
import java.io.IOException;
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
 * Positioned reads of {@code size} bytes ({@code readFully(position, ...)}) from a 64 MiB file
 * through {@link SealedFileSystem} over the local file system, with and without the chunk cache
 * ({@code sealpipe.fs.cache.chunks} = {@code cache}).
 *
 * <p>{@code pattern}: {@code random}, uniformly over the file (a cache of a few chunks rarely
 * hits); {@code nearby}, each read within 48 KiB after the previous one, wrapping at the end (a
 * columnar reader's pages and footers). The secondary results {@code bytesRead} and
 * {@code bytesDecrypted} (16384 per chunk the stream opened, from its IOStatistics counter
 * {@value SealedFileSystem#CHUNKS_OPENED}) are rates; their ratio is the chunk amplification.
 * {@code read=wrapped} makes the same positioned reads of the stored file through the wrapped
 * file system ({@code file}, Hadoop's checksummed {@code LocalFileSystem}), without decrypting:
 * what the wrapped file system's positioned reads cost by themselves.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="SealedRandomReadBenchmark -rf json -rff target/jmh-sealed-random.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 4, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class SealedRandomReadBenchmark {
    static final int FILE = 64 << 20;
    static final int POSITIONS = 1 << 16;

    @Param({"0", "8"})
    public int cache;

    @Param({"random", "nearby"})
    public String pattern;

    @Param({"4096"})
    public int size;

    /** {@code sealed}: through SealedFileSystem; {@code wrapped}: the stored file, not decrypted. */
    @Param({"sealed", "wrapped"})
    public String read;

    private Path dir;
    private FileSystem sealed;
    private FSDataInputStream in;
    private byte[] dst;
    private long[] positions;
    private int next;

    /** Per-iteration counts, reported by JMH as rates. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Counts {
        public long bytesRead;
        public long bytesDecrypted;

        @Setup(Level.Iteration)
        public void clear() {
            bytesRead = 0;
            bytesDecrypted = 0;
        }
    }

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("sealpipe-sealed-random");
        Configuration conf = SealedFileSystemBenchmark.SealedSetup.configuration(dir);
        conf.setInt(SealedFileSystem.CACHE_CHUNKS, cache);
        sealed = FileSystem.get(URI.create("sfile:///"), conf);
        byte[] plain = Fixtures.bytes(FILE, 5);
        org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path("sfile://" + dir.resolve("f"));
        try (OutputStream out = sealed.create(path, true)) {
            out.write(plain);
        }
        in = read.equals("sealed") ? sealed.open(path) : ((SealedFileSystem) sealed).getWrappedFileSystem()
                .open(((SealedFileSystem) sealed).toWrapped(path));
        dst = new byte[size];
        SplittableRandom random = new SplittableRandom(9);
        positions = new long[POSITIONS];
        long at = 0;
        for (int i = 0; i < POSITIONS; i++) {
            if (pattern.equals("random")) {
                at = random.nextLong(FILE - size);
            } else {
                at += random.nextLong(48 << 10);
                if (at > FILE - size) {
                    at = random.nextLong(48 << 10);
                }
            }
            positions[i] = at;
        }
        long p = positions[7];
        in.readFully(p, dst);
        if (read.equals("sealed") && !Arrays.equals(dst, 0, size, plain, (int) p, (int) p + size)) {
            throw new IllegalStateException("a positioned read does not return the plaintext");
        }
    }

    private long opened() {
        if (!read.equals("sealed")) {
            return 0;
        }
        return in.getIOStatistics().counters().get(SealedFileSystem.CHUNKS_OPENED);
    }

    @Benchmark
    public byte read(Counts counts) throws IOException {
        long before = opened();
        in.readFully(positions[next++ & (POSITIONS - 1)], dst);
        counts.bytesRead += size;
        counts.bytesDecrypted += (opened() - before) * 16384;
        return dst[0];
    }

    @TearDown
    public void tearDown() throws IOException {
        in.close();
        sealed.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
