package io.sealpipe.bench;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.TextLikeData;
import io.sealpipe.snappy.SnappyStreams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
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
import org.openjdk.jmh.annotations.Warmup;
import org.xerial.snappy.SnappyFramedInputStream;
import org.xerial.snappy.SnappyFramedOutputStream;

/**
 * The compress-then-encrypt pipeline on 1 GiB of text-like data ({@link TextLikeData}: a 64 MiB
 * stretch repeated 16 times, which Snappy, working on 64 KiB frames, compresses exactly as 1 GiB
 * of fresh text), side by side with its two stages alone, at parallelism 1 and 2.
 *
 * <ul>
 *   <li>{@code snappy+gcm-pN}: {@code SnappyStreams} (parallelism N) over {@code GcmStreams}
 *       (Cobblestone-256, openssl-jni, parallelism N); reading is decrypt-then-decompress;
 *   <li>{@code gcm-pN}: the GCM stream alone;
 *   <li>{@code snappy-pN}: our Snappy framing alone (no encryption);
 *   <li>{@code snappy-java}: snappy-java's own {@code SnappyFramedOutputStream} /
 *       {@code SnappyFramedInputStream}, the framed-Snappy stream users have today.
 * </ul>
 *
 * One operation writes (or reads) {@code size} bytes of plaintext; the write streams live for
 * the whole trial, going round the 1 GiB again and again, into a sink that only counts. Reading
 * goes through the ciphertext of the whole 1 GiB (encrypted in set-up), and at its end a new
 * stream starts on it, so the per-stream cost (key derivation, buffers) is part of the figures.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="PipelineBenchmark -prof gc -rf json -rff target/jmh-pipeline.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 4, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms6g", "-Xmx6g"})
public class PipelineBenchmark {
    static final int CORPUS = 1 << 30;
    static final int STRETCH = 64 << 20;

    @Param({"snappy+gcm-p1", "snappy+gcm-p2", "gcm-p1", "gcm-p2", "snappy-p1", "snappy-p2", "snappy-java"})
    public String impl;

    @Param({"1048576"})
    public int size;

    private byte[] corpus;
    private int writePos;
    private Fixtures.DiscardingSink sink;
    private OutputStream out;
    private byte[] sealed;
    private Fixtures.ArraySource source;
    private InputStream in;
    private byte[] dst;
    private GcmStreams gcm;
    private SnappyStreams snappy;

    @Setup
    public void setUp() throws IOException {
        corpus = corpus();
        dst = new byte[size];
        int parallelism = impl.endsWith("-p2") ? 2 : 1;
        if (impl.contains("gcm")) {
            gcm = GcmStreams.builder().key(Fixtures.bytes(Fixtures.KEY_LENGTH, 1)).engine(EngineKind.OPENSSL_JNI)
                    .parallelism(parallelism).closeUnderlying(false).build();
        }
        if (impl.startsWith("snappy-p") || impl.startsWith("snappy+")) {
            // Closing the Snappy layer closes the GCM layer under it (which ends the message); the
            // GCM layer leaves the sink or source alone.
            snappy = SnappyStreams.builder().parallelism(parallelism).build();
        }
        sink = new Fixtures.DiscardingSink();
        out = newWriter(sink);

        ByteArrayOutputStream all = new ByteArrayOutputStream(CORPUS + (CORPUS >> 4));
        try (OutputStream o = newWriter(all)) {
            for (int off = 0; off < CORPUS; off += 1 << 20) {
                o.write(corpus, off, 1 << 20);
            }
        }
        sealed = all.toByteArray();
        System.out.printf("%s: 1 GiB of text-like data -> %d bytes (%.3f)%n", impl, sealed.length,
                sealed.length / (double) CORPUS);
        source = new Fixtures.ArraySource(sealed);
        in = newReader(source);
        byte[] head = new byte[4 << 20];
        if (in.readNBytes(head, 0, head.length) != head.length
                || !Arrays.equals(head, 0, head.length, corpus, 0, head.length)) {
            throw new IllegalStateException(impl + ": the pipeline does not read back what was written");
        }
        in.close();
        source.rewind();
        in = newReader(source);
    }

    /** 1 GiB of text-like data: one 64 MiB stretch, 16 times. */
    static byte[] corpus() {
        byte[] c = new byte[CORPUS];
        new TextLikeData(1).fill(c, 0, STRETCH);
        for (int off = STRETCH; off < CORPUS; off += STRETCH) {
            System.arraycopy(c, 0, c, off, STRETCH);
        }
        return c;
    }

    private OutputStream newWriter(OutputStream to) throws IOException {
        return switch (impl) {
            case "snappy+gcm-p1", "snappy+gcm-p2" -> snappy.compress(gcm.encrypt(to));
            case "gcm-p1", "gcm-p2" -> gcm.encrypt(to);
            case "snappy-p1", "snappy-p2" -> snappy.compress(to);
            case "snappy-java" -> new SnappyFramedOutputStream(to);
            default -> throw new IllegalArgumentException("unknown impl " + impl);
        };
    }

    private InputStream newReader(InputStream from) throws IOException {
        return switch (impl) {
            case "snappy+gcm-p1", "snappy+gcm-p2" -> snappy.decompress(gcm.decrypt(from));
            case "gcm-p1", "gcm-p2" -> gcm.decrypt(from);
            case "snappy-p1", "snappy-p2" -> snappy.decompress(from);
            case "snappy-java" -> new SnappyFramedInputStream(from);
            default -> throw new IllegalArgumentException("unknown impl " + impl);
        };
    }

    @TearDown
    public void tearDown() throws IOException {
        out.close();
        in.close();
    }

    /** Writes the next {@code size} bytes of the corpus. */
    @Benchmark
    public long write() throws IOException {
        out.write(corpus, writePos, size);
        writePos = writePos + size == CORPUS ? 0 : writePos + size;
        return sink.count();
    }

    /** Reads {@code size} bytes; at the end of the 1 GiB message a new stream starts on it. */
    @Benchmark
    public byte[] read() throws IOException {
        for (int done = 0; done < size; ) {
            int n = in.read(dst, done, size - done);
            if (n < 0) {
                in.close();
                source.rewind();
                in = newReader(source);
                continue;
            }
            done += n;
        }
        return dst;
    }
}
