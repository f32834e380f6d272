package io.sealpipe.bench;

import io.sealpipe.hadoop.SealpipeAesCtrCryptoCodec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.CryptoCodec;
import org.apache.hadoop.crypto.CryptoInputStream;
import org.apache.hadoop.crypto.CryptoOutputStream;
import org.apache.hadoop.crypto.JceAesCtrCryptoCodec;
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
 * Hadoop's own AES-CTR streams ({@code org.apache.hadoop.crypto.CryptoOutputStream} and
 * {@code CryptoInputStream}, what HDFS encryption zones and MapReduce's encrypted intermediate
 * data run on) with sealpipe's codec and with Hadoop's {@code JceAesCtrCryptoCodec}, the codec
 * most installations fall back to (Hadoop's OpenSSL codec needs a libhadoop.so built against
 * OpenSSL 3).
 *
 * <p>Steady state, as in {@link CtrStreamBenchmark}: each stream lives for the whole trial; one
 * operation is one application write of {@code size} bytes, or reading {@code size} bytes; the
 * sink only counts and the source replays one ciphertext endlessly. {@code bufferSize} is
 * Hadoop's {@code hadoop.security.crypto.buffer.size} (default 8 KiB), the size of the direct
 * buffers the streams hand to the codec.
 *
 * <p>{@code impl}: {@code sealpipe} ({@link SealpipeAesCtrCryptoCodec}, on {@code auto}'s CTR
 * engine) or {@code hadoop-jce} ({@code JceAesCtrCryptoCodec}, SunJCE). Before measuring, the
 * set-up checks that the impl's streams give SunJCE's bytes.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="HadoopCodecBenchmark -rf json -rff target/jmh-hadoop-codec.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class HadoopCodecBenchmark {
    private static final String CTR = "AES/CTR/NoPadding";

    @Param({"sealpipe", "hadoop-jce"})
    public String impl;

    /** Bytes per application write or read. */
    @Param({"16384", "1048576"})
    public int size;

    /** The streams' buffer: Hadoop's default, and a larger one. */
    @Param({"8192", "65536"})
    public int bufferSize;

    private byte[] key;
    private byte[] iv;
    private byte[] plain;
    private byte[] dst;
    private CryptoCodec codec;
    private Fixtures.DiscardingSink sink;
    private OutputStream out;
    private InputStream in;

    @Setup
    public void setUp() throws IOException, GeneralSecurityException {
        key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        iv = Fixtures.bytes(16, 2);
        plain = Fixtures.bytes(size, 4);
        dst = new byte[size];
        codec = switch (impl) {
            case "sealpipe" -> new SealpipeAesCtrCryptoCodec();
            case "hadoop-jce" -> new JceAesCtrCryptoCodec();
            default -> throw new IllegalArgumentException("unknown impl " + impl + ": sealpipe or hadoop-jce");
        };
        ((org.apache.hadoop.conf.Configurable) codec).setConf(new Configuration(false));

        byte[] replayPlain = Fixtures.bytes(Math.max(size, bufferSize), 5);
        byte[] replayCipher = sunJce().doFinal(replayPlain);
        verify(replayPlain, replayCipher);

        sink = new Fixtures.DiscardingSink();
        out = new CryptoOutputStream(sink, codec, bufferSize, key, iv);
        in = new CryptoInputStream(new Fixtures.ReplaySource(replayCipher), codec, bufferSize, key, iv);
    }

    @TearDown
    public void tearDown() throws IOException {
        out.close();
        in.close();
    }

    /** One application write of {@code size} bytes to the long-lived encrypting stream. */
    @Benchmark
    public long write() throws IOException {
        out.write(plain, 0, size);
        return sink.count();
    }

    /** Reads {@code size} bytes from the long-lived decrypting stream. */
    @Benchmark
    public byte[] read() throws IOException {
        Fixtures.readFully(in, dst, size);
        return dst;
    }

    private Cipher sunJce() throws GeneralSecurityException {
        Cipher c = Cipher.getInstance(CTR, "SunJCE");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
        return c;
    }

    /** Fails the trial unless this impl's fresh streams give SunJCE's bytes both ways. */
    private void verify(byte[] replayPlain, byte[] replayCipher) throws IOException, GeneralSecurityException {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (OutputStream o = new CryptoOutputStream(captured, codec, bufferSize, key, iv)) {
            o.write(plain, 0, size);
            o.write(plain, 0, size);
        }
        byte[] twice = Arrays.copyOf(plain, 2 * size);
        System.arraycopy(plain, 0, twice, size, size);
        if (!Arrays.equals(captured.toByteArray(), sunJce().doFinal(twice))) {
            throw new IllegalStateException(impl + ": Hadoop's stream on this codec gives other bytes than SunJCE");
        }
        byte[] back = new byte[replayCipher.length];
        try (InputStream i = new CryptoInputStream(new Fixtures.ReplaySource(replayCipher), codec, bufferSize, key, iv)) {
            Fixtures.readFully(i, back, back.length);
        }
        if (!Arrays.equals(back, replayPlain)) {
            throw new IllegalStateException(impl + ": Hadoop's stream on this codec does not decrypt SunJCE's bytes");
        }
    }
}
