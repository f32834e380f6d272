package io.sealpipe.bench;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The fixed cost of a stream: one small message per operation ({@code size} bytes, a shuffle
 * block or a spill record), made from one shared {@link GcmStreams} or {@link CtrStreams}
 * instance, by one thread or by two at once (the instance's key is read whole under its lock
 * for each stream, issue 26). Microseconds per message.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="StreamSetupBenchmark -rf json -rff target/jmh-stream-setup.json"
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class StreamSetupBenchmark {
    @Param({"openssl-jni"})
    public String engine;

    @Param({"1024"})
    public int size;

    private GcmStreams gcm;
    private CtrStreams ctr;
    private byte[] plain;

    /** Each thread's array that CTR streams decrypt into. */
    @State(Scope.Thread)
    public static class Destination {
        final byte[] array = new byte[1 << 16];
    }

    @Setup
    public void setUp() {
        EngineKind kind = EngineKind.fromId(engine);
        gcm = GcmStreams.builder().key(Fixtures.bytes(Fixtures.KEY_LENGTH, 1)).engine(kind).parallelism(1).build();
        ctr = CtrStreams.builder().key(Fixtures.bytes(Fixtures.KEY_LENGTH, 1)).iv(Fixtures.bytes(16, 2)).engine(kind)
                .parallelism(1).build();
        plain = Fixtures.bytes(size, 3);
    }

    @TearDown
    public void tearDown() {
        gcm.destroy();
        ctr.destroy();
    }

    private long gcmMessage() throws IOException {
        Fixtures.DiscardingSink sink = new Fixtures.DiscardingSink();
        try (OutputStream out = gcm.encrypt(sink)) {
            out.write(plain);
        }
        return sink.count();
    }

    /** CTR streams: decrypting ones, since one CtrStreams encrypts one stream only (one key stream per IV). */
    private long ctrMessage(Destination to) throws IOException {
        try (InputStream in = ctr.decrypt(new ByteArrayInputStream(plain))) {
            return in.read(to.array, 0, size);
        }
    }

    /** One GCM message: stream, key derivation, cipher, one write, the final chunk. */
    @Benchmark
    @Threads(1)
    public long gcmOneThread() throws IOException {
        return gcmMessage();
    }

    /** The same from two threads sharing the instance. */
    @Benchmark
    @Threads(2)
    public long gcmTwoThreads() throws IOException {
        return gcmMessage();
    }

    /** One CTR stream: its own copy of the key, a cipher, one read. */
    @Benchmark
    @Threads(1)
    public long ctrOneThread(Destination to) throws IOException {
        return ctrMessage(to);
    }

    /** The same from two threads sharing the instance. */
    @Benchmark
    @Threads(2)
    public long ctrTwoThreads(Destination to) throws IOException {
        return ctrMessage(to);
    }
}
