package io.sealpipe.bench;

import com.google.crypto.tink.subtle.AesGcmHkdfStreaming;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Engines;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.Arrays;
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
 * Cobblestone-256 streams ({@link GcmStreams}, c2sp.org/chunked-encryption with AES-256-GCM) on
 * each engine, side by side in one run with the raw AES-256-GCM call they are built on, Tink's
 * streaming AEAD and SunJCE GCM.
 *
 * <p>One operation is one application {@code write} of {@code size} bytes to a long-lived
 * encrypting stream ({@link #encrypt()}), or reading {@code size} bytes from a decrypting stream
 * ({@link #decrypt()}). The sink only counts. The decrypting streams read a message of
 * {@code messageMiB} MiB (default 16: it stays in the 32 MiB L3 cache) held in an array, through
 * an unsynchronized source that copies like any source; at its end the stream is closed and a
 * new one opened on the same message, which costs its header check, its first MiB on one thread
 * and its buffers once per message (counted in the figures, allocation included). A long
 * message ({@code -p messageMiB=256}) shows what a stream does past its start.
 *
 * <p>{@code impl}:
 * <ul>
 *   <li>{@code openssl-jni}, {@code openssl-jna}, {@code jce}, {@code accp-engine} (the accp
 *       engine), {@code auto}: sealpipe's {@code GcmStreams} with a 32-byte key on that engine;
 *       {@code auto} is {@code Engines.auto()}, whose chosen engines warm up in the background
 *       (during JMH's warm-up), not in set-up.
 *   <li>{@code openssl-jni-mapped}: as {@code openssl-jni}, but the decrypting stream reads the
 *       message from a direct ByteBuffer ({@code GcmStreams.decrypt(ByteBuffer)}, as a
 *       {@code FileChannel.map} region gives): chunks are opened straight from it, no copy.
 *   <li>{@code raw-openssl-jni}: no stream, the openssl-jni engine's {@code AeadCipher.seal} /
 *       {@code open} of 16 KiB messages (a fresh nonce per seal), {@code size / 16384} per
 *       operation: the work of {@code openssl speed -evp aes-256-gcm -bytes 16384}, through our
 *       own JNI call.
 *   <li>{@code raw-openssl-jni-message}: as {@code raw-openssl-jni} for encryption; decryption
 *       opens the next 16 KiB chunk of the sealed message each time
 *       ({@code AeadCipher.openChunks}, one chunk a call) instead of the same chunk again: the
 *       stream's data, where it is, without the stream. The difference to {@code raw-openssl-jni}
 *       is what reading fresh data from L3 instead of L1/L2 costs.
 *   <li>{@code tink}: Tink 1.15's {@code AesGcmHkdfStreaming} with the parameters of its
 *       {@code AES256_GCM_HKDF_1MB} template (HKDF-SHA256, 32-byte key, 1 MiB segments).
 *   <li>{@code sunjce}: SunJCE {@code Cipher("AES/GCM/NoPadding")}, one {@code init} and
 *       {@code doFinal} per 16 KiB piece (a fresh nonce per seal): a hand-made chunked format.
 *   <li>{@code accp}: the same with the Amazon Corretto Crypto Provider 2.5 (AWS-LC) instead of
 *       SunJCE.
 * </ul>
 * The SunJCE-based impls (jce, tink, sunjce) are warmed in set-up with {@value #JCE_WARM_CALLS}
 * 16 KiB GCM seals and opens before JMH's own warm-up, or they would measure the interpreter.
 *
 * <p>{@code parallelism} is the sealpipe streams' {@code GcmStreams.Builder#parallelism} (1: the
 * benchmark thread alone; 2: with one shared worker, from each message's second MiB on), so p1
 * and p2 come side by side; the other impls ignore it (run them with {@code -p parallelism=1}).
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="GcmStreamBenchmark -prof gc -rf json -rff target/jmh-gcm-stream.json"
 * </pre>
 *
 * Reading at parallelism 1 against 2, 1 MiB reads, on openssl-jni:
 * <pre>
 * mvn -Pjmh verify -Djmh.args="'GcmStreamBenchmark.decrypt$' -p impl=openssl-jni -p size=1048576 -p parallelism=1,2"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class GcmStreamBenchmark {
    static final int JCE_WARM_CALLS = 10_000;
    private static final int CHUNK = 16384;

    @Param({"openssl-jni", "openssl-jni-mapped", "openssl-jna", "jce", "accp-engine", "auto", "raw-openssl-jni",
            "raw-openssl-jni-message", "tink", "sunjce", "accp"})
    public String impl;

    @Param({"16384", "1048576"})
    public int size;

    @Param({"1", "2"})
    public int parallelism;

    /** The decrypted message's size in MiB. */
    @Param({"16"})
    public int messageMiB;

    private byte[] key;
    private byte[] plain;
    private byte[] dst;
    private Fixtures.DiscardingSink sink;
    private OutputStream out;
    private byte[] message;      // the ciphertext the decrypting streams read
    private Fixtures.ArraySource source;
    private InputStream in;
    private GcmStreams gcm;
    private AesGcmHkdfStreaming tink;
    private AeadCipher raw;
    private Cipher sunjce;
    private SecretKeySpec sunjceKey;
    private final Fixtures.Nonces nonces = new Fixtures.Nonces();
    private byte[] sealedChunk;  // one 16 KiB message sealed, for raw and sunjce opens
    private byte[] sealedNonce;
    private ByteBuffer mapped;   // openssl-jni-mapped: the message in a direct buffer
    private byte[] sealedMessage; // raw-openssl-jni-message: the message as sealed chunks
    private byte[] baseNonce;
    private int messageChunks;
    private int nextChunk;

    @Setup
    public void setUp() throws IOException, GeneralSecurityException {
        key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        plain = Fixtures.bytes(size, 4);
        dst = new byte[size];
        sink = new Fixtures.DiscardingSink();
        if (impl.equals("jce") || impl.equals("tink") || impl.equals("sunjce") || impl.equals("accp")) {
            warmSunJce();
        }
        byte[] messagePlain = Fixtures.bytes(messageMiB << 20, 5);
        switch (impl) {
            case "openssl-jni", "openssl-jni-mapped", "openssl-jna", "jce", "accp-engine", "auto" -> {
                String engine = impl.replace("-mapped", "").replace("-engine", "");
                gcm = GcmStreams.builder().key(key).engine(Engines.forName(engine)).parallelism(parallelism)
                        .closeUnderlying(false).build();
                out = gcm.encrypt(sink);
                message = encrypt(gcm::encrypt, messagePlain);
            }
            case "tink" -> {
                tink = new AesGcmHkdfStreaming(key, "HmacSha256", 32, 1 << 20, 0);
                out = tink.newEncryptingStream(sink, new byte[0]);
                message = encrypt(o -> {
                    try {
                        return tink.newEncryptingStream(o, new byte[0]);
                    } catch (GeneralSecurityException | IOException e) {
                        throw new IllegalStateException(e);
                    }
                }, messagePlain);
            }
            case "raw-openssl-jni", "raw-openssl-jni-message", "sunjce", "accp" -> {
                byte[] chunk = Arrays.copyOf(messagePlain, CHUNK);
                sealedNonce = nonces.next().clone();
                if (impl.equals("sunjce") || impl.equals("accp")) {
                    sunjce = impl.equals("accp") ? Cipher.getInstance("AES/GCM/NoPadding", Fixtures.accp())
                            : Cipher.getInstance("AES/GCM/NoPadding", "SunJCE");
                    sunjceKey = new SecretKeySpec(key, "AES");
                    sunjce.init(Cipher.ENCRYPT_MODE, sunjceKey, new GCMParameterSpec(128, sealedNonce));
                    sealedChunk = sunjce.doFinal(chunk);
                } else {
                    raw = Engines.get(EngineKind.OPENSSL_JNI).newAesGcm(key);
                    sealedChunk = new byte[CHUNK + 16];
                    raw.seal(sealedNonce, null, chunk, 0, CHUNK, sealedChunk, 0);
                }
                verifyRawOpen(chunk);
                if (impl.endsWith("-message")) {
                    messageChunks = (messageMiB << 20) / CHUNK;
                    baseNonce = Fixtures.bytes(12, 6);
                    sealedMessage = new byte[messageChunks * (CHUNK + 16)];
                    raw.sealChunks(baseNonce, 0, messagePlain, 0, messageChunks, sealedMessage, 0);
                }
            }
            default -> throw new IllegalArgumentException("unknown impl " + impl);
        }
        if (message != null) {
            if (impl.endsWith("-mapped")) {
                mapped = ByteBuffer.allocateDirect(message.length).put(message).flip();
            }
            source = new Fixtures.ArraySource(message);
            in = newDecryptingStream();
            byte[] back = newDecryptingStream().readAllBytes();
            source.rewind();
            if (!Arrays.equals(back, messagePlain)) {
                throw new IllegalStateException(impl + ": the message does not decrypt to its plaintext");
            }
        }
    }

    private interface Encryptor {
        OutputStream wrap(OutputStream o) throws IOException;
    }

    private static byte[] encrypt(Encryptor e, byte[] plain) throws IOException {
        ByteArrayOutputStream sealed = new ByteArrayOutputStream(plain.length + plain.length / 100 + 1024);
        try (OutputStream o = e.wrap(sealed)) {
            o.write(plain);
        }
        return sealed.toByteArray();
    }

    private InputStream newDecryptingStream() throws IOException {
        if (mapped != null) {
            return gcm.decrypt(mapped);
        }
        try {
            return tink != null ? tink.newDecryptingStream(source, new byte[0]) : gcm.decrypt(source);
        } catch (GeneralSecurityException e) {
            throw new IOException(e);
        }
    }

    private void verifyRawOpen(byte[] chunk) throws GeneralSecurityException {
        byte[] opened = new byte[CHUNK];
        openChunk(opened, 0);
        if (!Arrays.equals(opened, chunk)) {
            throw new IllegalStateException(impl + ": the sealed chunk does not open to its plaintext");
        }
    }

    private void warmSunJce() throws GeneralSecurityException {
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding", "SunJCE");
        SecretKeySpec k = new SecretKeySpec(key, "AES");
        byte[] in = new byte[CHUNK];
        byte[] sealed = new byte[CHUNK + 16];
        byte[] opened = new byte[CHUNK];
        Fixtures.Nonces warmNonces = new Fixtures.Nonces();
        long start = System.nanoTime();
        for (int i = 0; i < JCE_WARM_CALLS; i++) {
            byte[] nonce = warmNonces.next();
            c.init(Cipher.ENCRYPT_MODE, k, new GCMParameterSpec(128, nonce));
            c.doFinal(in, 0, CHUNK, sealed, 0);
            c.init(Cipher.DECRYPT_MODE, k, new GCMParameterSpec(128, nonce));
            c.doFinal(sealed, 0, sealed.length, opened, 0);
        }
        System.out.printf("SunJCE GCM warmed: %d x 16 KiB seal+open in %d ms%n", JCE_WARM_CALLS,
                (System.nanoTime() - start) / 1_000_000);
    }

    @TearDown
    public void tearDown() throws IOException {
        if (out != null) {
            out.close();
        }
        if (in != null) {
            in.close();
        }
        if (raw != null) {
            raw.close();
        }
    }

    /** One application write of {@code size} bytes (or size / 16 KiB raw seals). */
    @Benchmark
    public long encrypt() throws IOException, GeneralSecurityException {
        if (out != null) {
            out.write(plain, 0, size);
            return sink.count();
        }
        for (int off = 0; off < size; off += CHUNK) {
            byte[] nonce = nonces.next();
            if (raw != null) {
                raw.seal(nonce, null, plain, off, CHUNK, sealedChunk, 0);
            } else {
                sunjce.init(Cipher.ENCRYPT_MODE, sunjceKey, new GCMParameterSpec(128, nonce));
                sunjce.doFinal(plain, off, CHUNK, sealedChunk, 0);
            }
        }
        return sealedChunk[0];
    }

    /** Reads {@code size} bytes (or opens size / 16 KiB raw messages). */
    @Benchmark
    public byte[] decrypt() throws IOException, GeneralSecurityException {
        if (in == null) {
            for (int off = 0; off < size; off += CHUNK) {
                openChunk(dst, off);
            }
            return dst;
        }
        for (int done = 0; done < size; ) {
            int n = in.read(dst, done, size - done);
            if (n < 0) { // the end of the message: start it again with a new stream
                in.close();
                source.rewind();
                in = newDecryptingStream();
                continue;
            }
            done += n;
        }
        return dst;
    }

    private void openChunk(byte[] into, int off) throws GeneralSecurityException {
        if (sealedMessage != null) {
            if (raw.openChunks(baseNonce, nextChunk, sealedMessage, nextChunk * (CHUNK + 16), 1, into, off) != 1) {
                throw new IllegalStateException("chunk " + nextChunk + " of the sealed message failed");
            }
            nextChunk = nextChunk + 1 == messageChunks ? 0 : nextChunk + 1;
        } else if (raw != null) {
            raw.open(sealedNonce, null, sealedChunk, 0, sealedChunk.length, into, off);
        } else {
            sunjce.init(Cipher.DECRYPT_MODE, sunjceKey, new GCMParameterSpec(128, sealedNonce));
            sunjce.doFinal(sealedChunk, 0, sealedChunk.length, into, off);
        }
    }
}
