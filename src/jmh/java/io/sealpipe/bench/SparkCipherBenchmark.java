package io.sealpipe.bench;

import io.sealpipe.commons.SealpipeChunkedGcmCipher;
import io.sealpipe.commons.SealpipeCryptoCipher;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.commons.crypto.cipher.CryptoCipherFactory;
import org.apache.commons.crypto.stream.CryptoInputStream;
import org.apache.commons.crypto.stream.CryptoOutputStream;
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
 * sealpipe's two Commons Crypto ciphers in the streams Spark's IO encryption makes: Commons
 * Crypto's generic {@code CryptoOutputStream} / {@code CryptoInputStream}, built as Spark's
 * {@code CryptoStreamUtils} builds them (transformation {@code AES/CTR/NoPadding}, the properties
 * naming one cipher class, stream, key, IV). One operation is one whole stream of {@code size}
 * bytes, as Spark writes one per shuffle segment, spill batch or block: made, written in 64 KiB
 * pieces and closed ({@link #write()}); or made over the stream's ciphertext, read to its end and
 * closed ({@link #read()}). So the per-stream costs (the cipher's key schedule, and for GCM the
 * message key's derivation and the random salt; Commons Crypto's direct buffers) count, as they
 * do in Spark. AES-128, Spark's default key size.
 *
 * <p>{@code impl}:
 * <ul>
 *   <li>{@code ctr-8k}: {@link SealpipeCryptoCipher} (AES-CTR, no integrity) with Spark's default
 *       8 KiB stream buffer;
 *   <li>{@code ctr-32k}: the same with a 32 KiB buffer, the one the GCM cipher needs;
 *   <li>{@code gcm}: {@link SealpipeChunkedGcmCipher}, which sets the 32 KiB buffer itself.
 * </ul>
 * The target of issue 47: {@code gcm} at least 0.9 times {@code ctr-8k}'s throughput.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="SparkCipherBenchmark -rf json -rff target/jmh-spark-cipher.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class SparkCipherBenchmark {
    private static final String TRANSFORMATION = "AES/CTR/NoPadding"; // what Spark asks for
    private static final int PIECE = 64 * 1024;

    @Param({"ctr-8k", "ctr-32k", "gcm"})
    public String impl;

    /** Plaintext bytes per stream: a small shuffle segment, and a large block. */
    @Param({"65536", "4194304"})
    public int size;

    private SecretKeySpec key;
    private IvParameterSpec iv;
    private byte[] plain;
    private byte[] sealed;
    private byte[] dst;
    private Fixtures.DiscardingSink sink;
    private Fixtures.ArraySource source;

    @Setup
    public void setUp() throws IOException {
        key = new SecretKeySpec(Fixtures.bytes(16, 1), "AES");
        iv = new IvParameterSpec(Fixtures.bytes(16, 2));
        plain = Fixtures.bytes(size, 3);
        dst = new byte[PIECE];
        ByteArrayOutputStream whole = new ByteArrayOutputStream();
        try (OutputStream out = newOutput(whole)) {
            out.write(plain);
        }
        sealed = whole.toByteArray();
        source = new Fixtures.ArraySource(sealed);
        byte[] back;
        try (InputStream in = newInput()) {
            back = in.readAllBytes();
        }
        if (!Arrays.equals(plain, back)) {
            throw new IllegalStateException(impl + ": the stream does not read back");
        }
        sink = new Fixtures.DiscardingSink();
    }

    /** One stream: made, {@code size} bytes written in 64 KiB pieces, closed. */
    @Benchmark
    public long write() throws IOException {
        try (OutputStream out = newOutput(sink)) {
            for (int at = 0; at < size; at += PIECE) {
                out.write(plain, at, Math.min(PIECE, size - at));
            }
        }
        return sink.count();
    }

    /** One stream: made over the ciphertext, read to its end in 64 KiB reads, closed. */
    @Benchmark
    public long read() throws IOException {
        long total = 0;
        try (InputStream in = newInput()) {
            for (int n; (n = in.read(dst, 0, PIECE)) >= 0; ) {
                total += n;
            }
        }
        return total;
    }

    private OutputStream newOutput(OutputStream to) throws IOException {
        return new CryptoOutputStream(TRANSFORMATION, properties(), to, key, iv);
    }

    private InputStream newInput() throws IOException {
        source.rewind();
        return new CryptoInputStream(TRANSFORMATION, properties(), source, key, iv);
    }

    /** As Spark passes them: a fresh set per stream, naming one cipher class (and a buffer size). */
    private Properties properties() {
        Properties p = new Properties();
        switch (impl) {
            case "ctr-8k" -> p.setProperty(CryptoCipherFactory.CLASSES_KEY, SealpipeCryptoCipher.class.getName());
            case "ctr-32k" -> {
                p.setProperty(CryptoCipherFactory.CLASSES_KEY, SealpipeCryptoCipher.class.getName());
                p.setProperty(CryptoInputStream.STREAM_BUFFER_SIZE_KEY, "32768");
            }
            case "gcm" -> p.setProperty(CryptoCipherFactory.CLASSES_KEY, SealpipeChunkedGcmCipher.class.getName());
            default -> throw new IllegalArgumentException("unknown impl " + impl);
        }
        return p;
    }
}
