package io.sealpipe.bench;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.Engines;
import io.sealpipe.gcm.GcmStreams;
import java.io.IOException;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The first {@value #TOTAL} bytes of a stream in a fresh JVM (one fork per measurement, no
 * warm-up), as a short job or an executor's first spill sees them: engine selection, the
 * stream's creation and 1 MiB writes into a counting sink, all timed. MB/s = {@value #TOTAL} /
 * 10<sup>6</sup> / seconds.
 *
 * <p>{@code impl}: {@code auto} ({@code Engines.auto()}: on an AVX-512 host, jce warming up in
 * the background behind openssl-jni), {@code openssl-jni} and {@code jce} forced. The target of
 * issue 13: {@code auto} at least as fast as {@code openssl-jni} from a cold start.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="ColdStartBenchmark -rf json -rff target/jmh-cold.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(value = 8, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class ColdStartBenchmark {
    static final int TOTAL = 256 << 20;
    private static final int WRITE = 1 << 20;

    @Param({"ctr", "gcm"})
    public String mode;

    @Param({"auto", "openssl-jni", "jce"})
    public String impl;

    private byte[] plain;
    private byte[] key;

    @Setup
    public void setUp() {
        key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        plain = Fixtures.bytes(WRITE, 4);
    }

    /** Chooses the engine, creates the stream and encrypts {@value #TOTAL} bytes, then closes it. */
    @Benchmark
    public long encrypt() throws IOException {
        Fixtures.DiscardingSink sink = new Fixtures.DiscardingSink();
        OutputStream out = mode.equals("ctr")
                ? CtrStreams.builder().key(key).iv(new byte[16]).engine(Engines.forName(impl)).parallelism(1).build()
                        .encrypt(sink)
                : GcmStreams.builder().key(key).engine(Engines.forName(impl)).parallelism(1).build().encrypt(sink);
        try (out) {
            for (int done = 0; done < TOTAL; done += WRITE) {
                out.write(plain, 0, WRITE);
            }
        }
        return sink.count();
    }
}
