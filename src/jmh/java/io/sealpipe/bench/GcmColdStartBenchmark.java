package io.sealpipe.bench;

import com.google.crypto.tink.subtle.AesGcmHkdfStreaming;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.gcm.GcmStreams;
import java.io.IOException;
import java.io.OutputStream;
import java.security.GeneralSecurityException;
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
 * A streaming encryption from a cold start: a fresh JVM (one fork per measurement, no warm-up)
 * encrypts {@value #TOTAL} bytes with 1 MiB writes into a counting sink, as a short-lived job
 * or the first spill of an executor does. Single-shot time, so MB/s = {@value #TOTAL} / 10^6 /
 * seconds; JMH's error is over the forks. Compares sealpipe's Cobblestone-256 stream on each
 * engine with Tink's {@code AesGcmHkdfStreaming} (AES256_GCM_HKDF_1MB parameters).
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="GcmColdStartBenchmark -rf json -rff target/jmh-gcm-cold.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(value = 5, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class GcmColdStartBenchmark {
    static final int TOTAL = 256 << 20;
    private static final int WRITE = 1 << 20;

    @Param({"openssl-jni", "jce", "tink"})
    public String impl;

    private byte[] plain;
    private byte[] key;

    @Setup
    public void setUp() {
        key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        plain = Fixtures.bytes(WRITE, 4);
    }

    /** Creates the stream and encrypts {@value #TOTAL} bytes, then closes it (writing the final chunk). */
    @Benchmark
    public long encrypt() throws IOException, GeneralSecurityException {
        Fixtures.DiscardingSink sink = new Fixtures.DiscardingSink();
        OutputStream out = impl.equals("tink")
                ? new AesGcmHkdfStreaming(key, "HmacSha256", 32, 1 << 20, 0).newEncryptingStream(sink, new byte[0])
                : GcmStreams.builder().key(key).engine(EngineKind.fromId(impl)).parallelism(1).build().encrypt(sink);
        try (out) {
            for (int done = 0; done < TOTAL; done += WRITE) {
                out.write(plain, 0, WRITE);
            }
        }
        return sink.count();
    }
}
