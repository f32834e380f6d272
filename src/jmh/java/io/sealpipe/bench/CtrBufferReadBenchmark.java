package io.sealpipe.bench;

import io.sealpipe.ctr.CryptoInputStream;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.StreamCipher;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
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

/**
 * Reading a sealpipe CTR stream by where its ciphertext is, side by side in one run with the
 * engine's bare cipher call on the same bytes: how much of the read is decryption and how much
 * is getting the ciphertext.
 *
 * <p>{@code source}:
 * <ul>
 *   <li>{@code buffer}: {@code CtrStreams.decrypt(ByteBuffer)} over a direct buffer, as a mapped
 *       file or a received block is: decrypted straight from the buffer into the reader's array.
 *       At the end of the buffer the stream seeks back to 0.
 *   <li>{@code stream}: {@code CtrStreams.decrypt(InputStream)} over
 *       {@link Fixtures.ReplaySource}, which copies the ciphertext into the reader's array; the
 *       stream decrypts it there in place (as in {@link CtrStreamBenchmark#read()}).
 *   <li>{@code cipher}: no stream, the engine's {@code StreamCipher.update} from the same direct
 *       buffer into the reader's array, {@code size} bytes a call: the work `openssl speed -evp
 *       aes-256-ctr` measures, through our own JNI call.
 * </ul>
 * One operation reads {@code size} bytes into one 16 KiB or 1 MiB array; the ciphertext is
 * max(size, 64 KiB) long, as in {@link CtrStreamBenchmark}. Set-up checks that both stream
 * sources decrypt it to its plaintext.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="CtrBufferReadBenchmark -prof gc -rf json -rff target/jmh-ctr-buffer.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class CtrBufferReadBenchmark {
    private static final int BUFFER_SIZE = CtrStreams.DEFAULT_BUFFER_SIZE;

    @Param({"openssl-jni", "openssl-jna", "jce"})
    public String engine;

    @Param({"buffer", "stream", "cipher"})
    public String source;

    @Param({"16384", "1048576"})
    public int size;

    private ByteBuffer ciphertext;
    private byte[] dst;
    private ByteBuffer dstView;
    private CtrStreams ctr;
    private CryptoInputStream in;
    private StreamCipher cipher;

    @Setup
    public void setUp() throws IOException, GeneralSecurityException {
        byte[] key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        byte[] iv = Fixtures.bytes(16, 2);
        byte[] plain = Fixtures.bytes(Math.max(size, BUFFER_SIZE), 5);
        ctr = CtrStreams.builder().key(key).iv(iv).engine(EngineKind.fromId(engine)).closeUnderlying(false)
                .parallelism(1).build();
        try (StreamCipher c = ctr.engine().newAesCtr(key, iv)) {
            byte[] encrypted = new byte[plain.length];
            c.update(plain, 0, plain.length, encrypted, 0);
            ciphertext = ByteBuffer.allocateDirect(encrypted.length).put(encrypted).flip();
            check(plain, ctr.decrypt(ciphertext).readAllBytes(), "buffer");
            byte[] viaStream = new byte[plain.length];
            ctr.decrypt(new Fixtures.ReplaySource(encrypted)).readNBytes(viaStream, 0, viaStream.length);
            check(plain, viaStream, "stream");
        }
        dst = new byte[size];
        dstView = ByteBuffer.wrap(dst);
        switch (source) {
            case "buffer" -> in = ctr.decrypt(ciphertext);
            case "stream" -> in = ctr.decrypt(new Fixtures.ReplaySource(toArray(ciphertext)));
            case "cipher" -> cipher = ctr.engine().newAesCtr(key, iv);
            default -> throw new IllegalArgumentException("unknown source " + source);
        }
    }

    private static byte[] toArray(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    private static void check(byte[] expected, byte[] got, String what) {
        if (!Arrays.equals(expected, got)) {
            throw new IllegalStateException("the " + what + " source does not decrypt to the plaintext");
        }
    }

    @TearDown
    public void tearDown() throws IOException {
        if (in != null) {
            in.close();
        }
        if (cipher != null) {
            cipher.close();
        }
        ctr.destroy();
    }

    /** Reads {@code size} bytes ({@code read} until done, or one cipher call). */
    @Benchmark
    public byte[] read() throws IOException {
        if (cipher != null) {
            if (!ciphertext.hasRemaining()) {
                ciphertext.position(0);
            }
            ciphertext.limit(ciphertext.position() + size);
            dstView.clear();
            cipher.update(ciphertext, dstView);
            ciphertext.limit(ciphertext.capacity());
            return dst;
        }
        if (source.equals("buffer") && in.getPos() == ciphertext.capacity()) {
            in.seek(0);
        }
        for (int done = 0; done < size; ) {
            int n = in.read(dst, done, size - done);
            if (n < 0) {
                throw new IllegalStateException("unexpected end at " + in.getPos());
            }
            done += n;
        }
        return dst;
    }
}
