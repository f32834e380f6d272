package io.sealpipe.bench;

import com.google.crypto.tink.subtle.AesGcmHkdfStreaming;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
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
 * Random access into a chunked GCM file: positioned reads of {@code size} bytes at pseudo-random
 * (unaligned) positions of a 64 MiB plaintext, through a {@code FileChannel} on a file in the
 * page cache, each read decrypting and verifying every chunk it touches.
 *
 * <ul>
 *   <li>{@code openssl-jni}, {@code openssl-jna}, {@code jce}: {@link GcmSeekableChannel}
 *       ({@code GcmStreams.open}, Cobblestone-256) and its thread-safe {@code readFully(position, ...)};
 *   <li>{@code tink}: Tink 1.15's {@code AesGcmHkdfStreaming} (its {@code AES256_GCM_HKDF_1MB}
 *       parameters: 1 MiB segments) through {@code newSeekableDecryptingChannel}, position then
 *       read: Tink has to decrypt a whole 1 MiB segment for any read inside it;
 *   <li>{@code tink-16k}: the same with 16 KiB segments, the chunk size of our format.
 * </ul>
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="GcmRandomAccessBenchmark -prof gc -rf json -rff target/jmh-gcm-random.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 4, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class GcmRandomAccessBenchmark {
    static final int PLAINTEXT = 64 << 20;
    static final int POSITIONS = 4096;

    @Param({"openssl-jni", "openssl-jna", "jce", "tink", "tink-16k"})
    public String impl;

    @Param({"4096", "16384", "1048576"})
    public int size;

    private Path file;
    private FileChannel channel;
    private GcmSeekableChannel gcm;
    private SeekableByteChannel tink;
    private ByteBuffer tinkDst;
    private byte[] dst;
    private long[] positions;
    private int next;

    @Setup
    public void setUp() throws IOException, GeneralSecurityException {
        byte[] key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        byte[] plain = Fixtures.bytes(PLAINTEXT, 5);
        file = Files.createTempFile("sealpipe-random-access", ".bin");
        if (!impl.startsWith("tink")) {
            GcmStreams streams = GcmStreams.builder().key(key).engine(EngineKind.fromId(impl)).parallelism(1).build();
            try (OutputStream out = streams.encrypt(Files.newOutputStream(file))) {
                out.write(plain);
            }
            if (impl.equals("jce")) {
                warmSunJce(key);
            }
            channel = FileChannel.open(file, StandardOpenOption.READ);
            gcm = streams.open(channel);
        } else {
            warmSunJce(key);
            AesGcmHkdfStreaming t = new AesGcmHkdfStreaming(key, "HmacSha256", 32,
                    impl.equals("tink") ? 1 << 20 : 16 << 10, 0);
            try (OutputStream out = t.newEncryptingStream(Files.newOutputStream(file), new byte[0])) {
                out.write(plain);
            }
            channel = FileChannel.open(file, StandardOpenOption.READ);
            tink = t.newSeekableDecryptingChannel(channel, new byte[0]);
        }
        dst = new byte[size];
        tinkDst = ByteBuffer.wrap(dst);
        SplittableRandom random = new SplittableRandom(9);
        positions = new long[POSITIONS];
        for (int i = 0; i < POSITIONS; i++) {
            positions[i] = random.nextLong(PLAINTEXT - size);
        }
        // Both ways read back the plaintext.
        long p = positions[1];
        read(p);
        if (!Arrays.equals(dst, 0, size, plain, (int) p, (int) p + size)) {
            throw new IllegalStateException(impl + ": a positioned read does not return the plaintext");
        }
    }

    private void warmSunJce(byte[] key) throws GeneralSecurityException {
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding", "SunJCE");
        SecretKeySpec k = new SecretKeySpec(key, "AES");
        byte[] in = new byte[16384];
        byte[] sealed = new byte[16384 + 16];
        Fixtures.Nonces nonces = new Fixtures.Nonces();
        for (int i = 0; i < GcmStreamBenchmark.JCE_WARM_CALLS; i++) {
            byte[] nonce = nonces.next();
            c.init(Cipher.ENCRYPT_MODE, k, new GCMParameterSpec(128, nonce));
            c.doFinal(in, 0, in.length, sealed, 0);
            c.init(Cipher.DECRYPT_MODE, k, new GCMParameterSpec(128, nonce));
            c.doFinal(sealed, 0, sealed.length, in, 0);
        }
    }

    private void read(long position) throws IOException {
        if (gcm != null) {
            gcm.readFully(position, dst, 0, size);
            return;
        }
        tink.position(position);
        tinkDst.clear();
        while (tinkDst.hasRemaining()) {
            if (tink.read(tinkDst) < 0) {
                throw new IOException("unexpected end at " + position);
            }
        }
    }

    @TearDown
    public void tearDown() throws IOException {
        if (gcm != null) {
            gcm.close();
        }
        if (tink != null) {
            tink.close();
        }
        channel.close();
        Files.deleteIfExists(file);
    }

    /** One positioned read of {@code size} bytes at the next pseudo-random position. */
    @Benchmark
    public byte[] positionedRead() throws IOException {
        read(positions[next]);
        next = (next + 1) % POSITIONS;
        return dst;
    }
}
