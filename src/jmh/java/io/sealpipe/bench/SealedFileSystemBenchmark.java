package io.sealpipe.bench;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
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
 * Sequential write and read of a 64 MiB file through {@link SealedFileSystem} ({@code sfile}
 * over Hadoop's local file system) against {@link GcmStreams} on the same wrapped file system's
 * streams ({@code file}, the same {@code LocalFileSystem} with its checksums), the same key and
 * engine: what the file system adds to the format's own streams. {@code gcm-streams-nio} is
 * GcmStreams on {@code java.nio.file.Files} streams, without Hadoop, for scale.
 *
 * <p>One operation writes or reads the whole file in application calls of {@code bufferSize}
 * bytes (a file in the page cache: the figure is CPU, not disk). Operations per second times 64
 * MiB is the throughput.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="SealedFileSystemBenchmark -rf json -rff target/jmh-sealed-fs.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 4, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 6, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class SealedFileSystemBenchmark {
    static final int FILE = 64 << 20;

    @Param({"sealed", "gcm-streams", "gcm-streams-nio"})
    public String impl;

    /** Bytes per application write or read. */
    @Param({"65536"})
    public int bufferSize;

    private Path dir;
    private FileSystem sealed;
    private FileSystem local;
    private GcmStreams gcm;
    private byte[] plain;
    private byte[] buffer;
    private int round;

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("sealpipe-sealed-fs");
        Configuration conf = SealedSetup.configuration(dir);
        sealed = FileSystem.get(URI.create("sfile:///"), conf);
        local = FileSystem.getLocal(new Configuration(false));
        gcm = SealedSetup.currentKey(conf);
        plain = Fixtures.bytes(FILE, 3);
        buffer = new byte[bufferSize];
        try (OutputStream out = sealed.create(sealedPath("in"), true)) {
            out.write(plain);
        }
        byte[] back = readAll(open("in"));
        if (!Arrays.equals(plain, back)) {
            throw new IllegalStateException(impl + ": the file does not read back as written");
        }
    }

    private org.apache.hadoop.fs.Path sealedPath(String name) {
        return new org.apache.hadoop.fs.Path("sfile://" + dir.resolve(name));
    }

    private org.apache.hadoop.fs.Path localPath(String name) {
        return new org.apache.hadoop.fs.Path("file://" + dir.resolve(name));
    }

    private InputStream open(String name) throws IOException {
        return switch (impl) {
            case "sealed" -> sealed.open(sealedPath(name));
            case "gcm-streams" -> gcm.decrypt(local.open(localPath(name)));
            case "gcm-streams-nio" -> gcm.decrypt(Files.newInputStream(dir.resolve(name)));
            default -> throw new IllegalArgumentException("impl: " + impl);
        };
    }

    private OutputStream create(String name) throws IOException {
        return switch (impl) {
            case "sealed" -> sealed.create(sealedPath(name), true);
            case "gcm-streams" -> gcm.encrypt(local.create(localPath(name), true));
            case "gcm-streams-nio" -> gcm.encrypt(Files.newOutputStream(dir.resolve(name)));
            default -> throw new IllegalArgumentException("impl: " + impl);
        };
    }

    private byte[] readAll(InputStream in) throws IOException {
        try (in) {
            return in.readAllBytes();
        }
    }

    @Benchmark
    public long write() throws IOException {
        try (OutputStream out = create("out" + (round++ & 1))) {
            for (int at = 0; at < FILE; at += bufferSize) {
                out.write(plain, at, Math.min(bufferSize, FILE - at));
            }
        }
        return round;
    }

    @Benchmark
    public long read() throws IOException {
        long total = 0;
        try (InputStream in = open("in")) {
            for (int n; (n = in.read(buffer, 0, bufferSize)) > 0; ) {
                total += n;
            }
        }
        if (total != FILE) {
            throw new IllegalStateException("read " + total + " bytes of " + FILE);
        }
        return total;
    }

    @TearDown
    public void tearDown() throws IOException {
        sealed.close();
        gcm.destroy();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** A jceks keystore with a 256-bit key {@code data} in {@code dir}, and sfile over file on it. */
    static final class SealedSetup {
        private SealedSetup() {}

        static Configuration configuration(Path dir) throws IOException {
            String keystore = "jceks://file" + dir.resolve("keys.jceks");
            KeyProvider provider = KeyProviderFactory.get(URI.create(keystore), new Configuration(false));
            try {
                KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
                options.setBitLength(256);
                provider.createKey("data", options);
                provider.flush();
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IOException(e);
            } finally {
                provider.close();
            }
            Configuration conf = new Configuration(false);
            conf.set("fs.sfile.impl", SealedFileSystem.class.getName());
            conf.setBoolean("fs.sfile.impl.disable.cache", true);
            conf.set(SealedFileSystem.wrapsKey("sfile"), "file");
            conf.set(SealedFileSystem.KEY_PROVIDER_PATH, keystore);
            conf.set(SealedFileSystem.KEY_NAME, "data");
            return conf;
        }

        /** The key's current version as GcmStreams, as the file system writes with it. */
        static GcmStreams currentKey(Configuration conf) throws IOException {
            KeyProvider provider = KeyProviderFactory.get(URI.create(conf.get(SealedFileSystem.KEY_PROVIDER_PATH)), conf);
            try {
                return GcmStreams.builder().key(provider.getCurrentKey("data").getMaterial()).parallelism(1).build();
            } finally {
                provider.close();
            }
        }
    }
}
