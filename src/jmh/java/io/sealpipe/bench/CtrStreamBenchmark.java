package io.sealpipe.bench;

import io.sealpipe.commons.SealpipeCryptoCipher;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.Engines;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.commons.crypto.Crypto;
import org.apache.commons.crypto.cipher.CryptoCipher;
import org.apache.commons.crypto.cipher.CryptoCipherFactory;
import org.apache.commons.crypto.cipher.CryptoCipherFactory.CipherProvider;
import org.apache.commons.crypto.stream.CryptoInputStream;
import org.apache.commons.crypto.stream.CryptoOutputStream;
import org.apache.commons.crypto.stream.CtrCryptoInputStream;
import org.apache.commons.crypto.stream.CtrCryptoOutputStream;
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
 * Throughput of the Hadoop-compatible AES-256-CTR streams ({@link CtrStreams}) on each engine,
 * side by side with Apache Commons Crypto 1.2.0's {@code CtrCryptoOutputStream} /
 * {@code CtrCryptoInputStream} and with a plain SunJCE {@code Cipher} loop.
 *
 * <p>Steady state: every stream is created once per trial and lives for the whole trial, as a
 * shuffle or spill file stream does; one operation is one application {@code write} of
 * {@code size} bytes ({@link #write()}), or reading {@code size} bytes with {@code read} calls
 * until that many have arrived ({@link #read()}). When a stream passes ciphertext on, or
 * how much it reads ahead, is its own business (no flush per operation). The sink
 * ({@link Fixtures.DiscardingSink}) only counts; the source ({@link Fixtures.ReplaySource})
 * replays a pre-encrypted ciphertext of max(size, bufferSize) bytes endlessly, copying it
 * like any real source would. So MB/s = ops/s &times; size / 10<sup>6</sup>; {@link JmhToMbps}
 * prints the table, and the allocation per operation when run with {@code -prof gc}.
 *
 * <p>{@code impl}:
 * <ul>
 *   <li>{@code auto}: {@code CtrStreams} on {@code Engines.auto()}, the engine chosen for AES-CTR
 *       on this host (it may start on another engine and switch once the chosen one is warm:
 *       the warm-up iterations cover that).
 *   <li>{@code openssl-jni}, {@code openssl-jna}, {@code jce}: sealpipe's {@code CtrStreams} on
 *       that engine, buffer {@code bufferSize}, {@code closeUnderlying(false)}.
 *   <li>{@code commons-crypto-jce}: Commons Crypto's CTR streams on its {@code JceCipher}. This is
 *       what users get on OpenSSL 3 with default properties: its OpenSSL cipher fails to load
 *       (libcrypto.so.3 lacks {@code EVP_CIPHER_CTX_block_size}, {@code EVP_CIPHER_flags}) and the
 *       factory falls back to JCE without a word; the set-up prints what the default picks.
 *   <li>{@code commons-crypto-openssl}: the same streams on its {@code OpenSslCipher}. Loads only
 *       with the benchmark-only shim of {@code src/jmh/native} (built by the jmh profile), which the
 *       fork finds through {@code -Djni.library.path=target/jmh-native/commons-crypto}
 *       (set below); without it the trial fails and says why.
 *   <li>{@code commons-crypto-sealpipe}: the same streams on sealpipe's {@link SealpipeCryptoCipher}
 *       (on {@code auto}'s CTR engine), as Spark runs them when it names that class.
 *   <li>{@code spark-path-jce}, {@code spark-path-sealpipe}: Commons Crypto's generic
 *       {@code CryptoOutputStream} / {@code CryptoInputStream} (not the CTR ones), built exactly as
 *       Spark's {@code CryptoStreamUtils} builds them for IO encryption (transformation, properties,
 *       stream, key, IV), on its JCE cipher (Spark's default on OpenSSL 3) and on sealpipe's.
 *   <li>{@code spark-path-copy}: the same generic streams on {@link CopyCipher}, a
 *       {@code CryptoCipher} that only copies its input to its output (no encryption, so its
 *       trial skips the check against SunJCE): what the streams cost with a cipher that costs one
 *       copy.
 *   <li>{@code spark-path-none}: the same streams on {@link NoCipher}, which copies nothing (it
 *       only moves the buffers' positions): what the streams alone cost around any cipher.
 *   <li>{@code sunjce}: a plain {@code Cipher.getInstance("AES/CTR/NoPadding")} (SunJCE): writes
 *       are encrypted in {@code bufferSize} pieces into one array and passed to the same sink;
 *       reads fill one array of {@code bufferSize} from the same source and decrypt into the
 *       caller's array.
 * </ul>
 * (The Amazon Corretto Crypto Provider, a baseline of the GCM benchmarks, has no AES-CTR in 2.5.)
 * Commons Crypto is given the same buffer size ({@code commons.crypto.stream.buffer.size}; its
 * default is 8 KiB).
 *
 * <p>Warm-up: SunJCE reaches its AES-CTR intrinsic only once C2 has compiled the callers, which
 * takes thousands of calls; a 1 MiB measurement right after start would measure the
 * interpreter. So the set-up of the SunJCE-based impls makes {@value #JCE_WARM_CALLS} 16 KiB
 * {@code update} calls on a scratch cipher, and every trial has 5 &times; 2 s of warm-up.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="CtrStreamBenchmark -prof gc -rf json -rff target/jmh-ctr-stream.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Djni.library.path=" + CtrStreamBenchmark.SHIM_DIR})
public class CtrStreamBenchmark {
    /** Where src/jmh/native/Makefile puts the shim, as libcrypto.so; relative to the project. */
    static final String SHIM_DIR = "target/jmh-native/commons-crypto";

    /** 16 KiB SunJCE calls made in set-up so that C2 has compiled the AES-CTR path. */
    static final int JCE_WARM_CALLS = 20_000;

    private static final String CTR = "AES/CTR/NoPadding";
    private static final String SEALPIPE_CIPHER = SealpipeCryptoCipher.class.getName();

    @Param({"auto", "openssl-jni", "openssl-jna", "jce", "commons-crypto-jce", "commons-crypto-openssl",
            "commons-crypto-sealpipe", "spark-path-jce", "spark-path-sealpipe", "spark-path-copy", "spark-path-none", "sunjce"})
    public String impl;

    /** Bytes per application write or read: sealpipe's chunk size, and a large write. */
    @Param({"16384", "1048576"})
    public int size;

    /** Every stream's buffer (sealpipe's default). */
    @Param({"65536"})
    public int bufferSize;

    private byte[] key;
    private byte[] iv;
    private byte[] plain;
    private byte[] dst;
    private Fixtures.DiscardingSink sink;
    private Fixtures.ReplaySource source;
    private OutputStream out;
    private InputStream in;

    @Setup
    public void setUp() throws IOException, GeneralSecurityException {
        key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        iv = Fixtures.bytes(16, 2);
        plain = Fixtures.bytes(size, 4);
        dst = new byte[size];

        if (impl.equals("jce") || impl.startsWith("commons-crypto") || impl.startsWith("spark-path")
                || impl.equals("sunjce")) {
            warmSunJce();
        }
        if (impl.startsWith("commons-crypto")) {
            System.out.println("Commons Crypto " + Crypto.getComponentVersion() + ": native code loaded "
                    + Crypto.isNativeCodeLoaded() + "; default properties give " + commonsCryptoDefault());
        }

        // Reference: the stream encrypted by plain SunJCE from position 0.
        byte[] replayPlain = Fixtures.bytes(Math.max(size, bufferSize), 5);
        byte[] replayCipher = sunJce(Cipher.ENCRYPT_MODE).doFinal(replayPlain);
        if (!impl.equals("spark-path-copy") && !impl.equals("spark-path-none")) {
            verify(replayPlain, replayCipher);
        }

        sink = new Fixtures.DiscardingSink();
        source = new Fixtures.ReplaySource(replayCipher);
        out = newOutput(sink);
        in = newInput(source);
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

    /** Reads {@code size} bytes from the long-lived decrypting stream ({@code read} until done). */
    @Benchmark
    public byte[] read() throws IOException {
        Fixtures.readFully(in, dst, size);
        return dst;
    }

    private OutputStream newOutput(OutputStream to) throws IOException, GeneralSecurityException {
        return switch (impl) {
            case "auto", "openssl-jni", "openssl-jna", "jce" -> ctrStreams().encrypt(to);
            case "commons-crypto-jce" -> new CommonsOut(commonsCrypto(CipherProvider.JCE), to, key, iv);
            case "commons-crypto-openssl" -> new CommonsOut(commonsCrypto(CipherProvider.OPENSSL), to, key, iv);
            case "commons-crypto-sealpipe" -> new CommonsOut(commonsCrypto(SEALPIPE_CIPHER), to, key, iv);
            case "spark-path-jce", "spark-path-sealpipe", "spark-path-copy", "spark-path-none" ->
                    new CryptoOutputStream(CTR, sparkPath(), to, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
            case "sunjce" -> new SunJceOutput(sunJce(Cipher.ENCRYPT_MODE), to, bufferSize);
            default -> throw new IllegalArgumentException("unknown impl " + impl);
        };
    }

    private InputStream newInput(InputStream from) throws IOException, GeneralSecurityException {
        return switch (impl) {
            case "auto", "openssl-jni", "openssl-jna", "jce" -> ctrStreams().decrypt(from);
            case "commons-crypto-jce" -> new CtrCryptoInputStream(commonsCrypto(CipherProvider.JCE), from, key, iv);
            case "commons-crypto-openssl" ->
                    new CtrCryptoInputStream(commonsCrypto(CipherProvider.OPENSSL), from, key, iv);
            case "commons-crypto-sealpipe" -> new CtrCryptoInputStream(commonsCrypto(SEALPIPE_CIPHER), from, key, iv);
            case "spark-path-jce", "spark-path-sealpipe", "spark-path-copy", "spark-path-none" ->
                    new CryptoInputStream(CTR, sparkPath(), from, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
            case "sunjce" -> new SunJceInput(sunJce(Cipher.DECRYPT_MODE), from, bufferSize);
            default -> throw new IllegalArgumentException("unknown impl " + impl);
        };
    }

    private CtrStreams ctrStreams() {
        return CtrStreams.builder().key(key).iv(iv).engine(Engines.forName(impl)).parallelism(1)
                .bufferSize(bufferSize).closeUnderlying(false).build();
    }

    /**
     * Properties selecting exactly one Commons Crypto cipher class (so a failed OpenSSL load
     * fails the trial instead of silently measuring JCE), with this benchmark's buffer size.
     */
    private Properties commonsCrypto(CipherProvider provider) throws GeneralSecurityException {
        return commonsCrypto(provider.getClassName());
    }

    private Properties commonsCrypto(String cipherClass) throws GeneralSecurityException {
        Properties p = new Properties();
        p.setProperty(CryptoCipherFactory.CLASSES_KEY, cipherClass);
        p.setProperty(CryptoInputStream.STREAM_BUFFER_SIZE_KEY, Integer.toString(bufferSize));
        try {
            CryptoCipherFactory.getCryptoCipher(CTR, p).close();
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("Commons Crypto's " + cipherClass + " cipher is not available ("
                    + rootCause(e) + "); for OPENSSL on OpenSSL 3 the shim is needed: mvn -Pjmh builds it (make -C src/jmh/native)"
                    + shimHint(), e);
        }
        return p;
    }

    /** The properties of a {@code spark-path-*} impl: its one cipher class, this buffer size. */
    private Properties sparkPath() throws GeneralSecurityException {
        return commonsCrypto(switch (impl) {
            case "spark-path-jce" -> CipherProvider.JCE.getClassName();
            case "spark-path-sealpipe" -> SEALPIPE_CIPHER;
            case "spark-path-copy" -> CopyCipher.class.getName();
            default -> NoCipher.class.getName();
        });
    }

    /** Where this JVM makes Commons Crypto look for libcrypto.so (see {@link #SHIM_DIR}). */
    private static String shimHint() {
        String dir = System.getProperty("jni.library.path");
        if (dir == null) {
            return " and keep -Djni.library.path=" + SHIM_DIR + " in the fork's JVM arguments (it is not set here)";
        }
        return " (this fork looks for libcrypto.so in " + new File(dir).getAbsolutePath() + ")";
    }

    /** The cipher class Commons Crypto picks with no properties at all, and why not OpenSSL. */
    private String commonsCryptoDefault() throws IOException {
        try (CommonsOut probe = new CommonsOut(new Properties(), new ByteArrayOutputStream(), key, iv)) {
            String picked = probe.cipherClass();
            if (picked.equals(CipherProvider.OPENSSL.getClassName())) {
                return picked;
            }
            Properties openssl = new Properties();
            openssl.setProperty(CryptoCipherFactory.CLASSES_KEY, CipherProvider.OPENSSL.getClassName());
            try {
                CryptoCipherFactory.getCryptoCipher(CTR, openssl).close();
                return picked;
            } catch (GeneralSecurityException e) {
                return picked + " (OpenSslCipher: " + rootCause(e) + ")";
            }
        }
    }

    private static String rootCause(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.toString();
    }

    private Cipher sunJce(int mode) throws GeneralSecurityException {
        Cipher c = Cipher.getInstance(CTR, "SunJCE");
        c.init(mode, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
        return c;
    }

    /** {@value #JCE_WARM_CALLS} 16 KiB updates on a scratch SunJCE cipher (see the class comment). */
    private void warmSunJce() throws GeneralSecurityException {
        Cipher c = sunJce(Cipher.ENCRYPT_MODE);
        byte[] in = new byte[16384];
        byte[] out = new byte[16384]; // not in place: SunJCE would copy the input on every call
        long start = System.nanoTime();
        for (int i = 0; i < JCE_WARM_CALLS; i++) {
            c.update(in, 0, in.length, out, 0);
        }
        System.out.printf("SunJCE warmed: %d x 16 KiB in %d ms%n", JCE_WARM_CALLS, (System.nanoTime() - start) / 1_000_000);
    }

    /**
     * Fails the trial unless this impl's fresh streams encrypt like SunJCE (two writes of
     * {@code size}, then flush) and decrypt the reference ciphertext back to its plaintext.
     */
    private void verify(byte[] replayPlain, byte[] replayCipher) throws IOException, GeneralSecurityException {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (OutputStream o = newOutput(captured)) {
            o.write(plain, 0, size);
            o.write(plain, 0, size);
            o.flush();
        }
        byte[] twice = Arrays.copyOf(plain, 2 * size);
        System.arraycopy(plain, 0, twice, size, size);
        if (!Arrays.equals(captured.toByteArray(), sunJce(Cipher.ENCRYPT_MODE).doFinal(twice))) {
            throw new IllegalStateException(impl + ": the stream's ciphertext differs from SunJCE's");
        }
        byte[] back = new byte[replayCipher.length];
        try (InputStream i = newInput(new Fixtures.ReplaySource(replayCipher))) {
            Fixtures.readFully(i, back, back.length);
        }
        if (!Arrays.equals(back, replayPlain)) {
            throw new IllegalStateException(impl + ": the stream does not decrypt SunJCE's ciphertext");
        }
    }

    /** Commons Crypto's CTR output stream, exposing which cipher class it runs on. */
    private static final class CommonsOut extends CtrCryptoOutputStream {
        CommonsOut(Properties props, OutputStream out, byte[] key, byte[] iv) throws IOException {
            super(props, out, key, iv);
        }

        String cipherClass() {
            return getCipher().getClass().getName();
        }
    }

    /**
     * Not a cipher: what {@link CopyCipher} and {@link NoCipher} share (no key, no state; a final
     * call is an update). Commons Crypto's factory loads them by name, hence public classes with
     * the {@code (Properties, String)} constructor.
     */
    public abstract static class PassThroughCipher implements CryptoCipher {
        @Override
        public int getBlockSize() {
            return 16;
        }

        @Override
        public String getAlgorithm() {
            return CTR;
        }

        @Override
        public void init(int mode, Key key, AlgorithmParameterSpec params) {
        }

        @Override
        public int doFinal(ByteBuffer inBuffer, ByteBuffer outBuffer) {
            return update(inBuffer, outBuffer);
        }

        @Override
        public int doFinal(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset) {
            return update(input, inputOffset, inputLen, output, outputOffset);
        }

        @Override
        public abstract int update(ByteBuffer inBuffer, ByteBuffer outBuffer);

        @Override
        public abstract int update(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset);

        @Override
        public void close() {
        }
    }

    /** Copies its input to its output: the streams on it cost what they cost around any cipher, plus one copy. */
    public static final class CopyCipher extends PassThroughCipher {
        public CopyCipher(Properties props, String transformation) {
        }

        @Override
        public int update(ByteBuffer inBuffer, ByteBuffer outBuffer) {
            int n = inBuffer.remaining();
            outBuffer.put(inBuffer);
            return n;
        }

        @Override
        public int update(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset) {
            System.arraycopy(input, inputOffset, output, outputOffset, inputLen);
            return inputLen;
        }
    }

    /**
     * Touches no byte (moves the buffers' positions only): the streams on it cost what they cost
     * around any cipher.
     */
    public static final class NoCipher extends PassThroughCipher {
        public NoCipher(Properties props, String transformation) {
        }

        @Override
        public int update(ByteBuffer inBuffer, ByteBuffer outBuffer) {
            int n = inBuffer.remaining();
            inBuffer.position(inBuffer.limit());
            outBuffer.position(outBuffer.position() + n);
            return n;
        }

        @Override
        public int update(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset) {
            return inputLen;
        }
    }

    /** The baseline: SunJCE update calls of at most one buffer, each passed on to the sink. */
    private static final class SunJceOutput extends OutputStream {
        private final Cipher cipher;
        private final OutputStream sink;
        private final byte[] buffer;

        SunJceOutput(Cipher cipher, OutputStream sink, int bufferSize) {
            this.cipher = cipher;
            this.sink = sink;
            this.buffer = new byte[bufferSize];
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                while (len > 0) {
                    int n = cipher.update(b, off, Math.min(len, buffer.length), buffer, 0);
                    sink.write(buffer, 0, n);
                    off += n;
                    len -= n;
                }
            } catch (ShortBufferException e) {
                throw new IOException(e);
            }
        }
    }

    /** The baseline: reads at most one buffer of ciphertext, decrypts it into the caller's array. */
    private static final class SunJceInput extends InputStream {
        private final Cipher cipher;
        private final InputStream source;
        private final byte[] buffer;

        SunJceInput(Cipher cipher, InputStream source, int bufferSize) {
            this.cipher = cipher;
            this.source = source;
            this.buffer = new byte[bufferSize];
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = source.read(buffer, 0, Math.min(len, buffer.length));
            if (n <= 0) {
                return n;
            }
            try {
                return cipher.update(buffer, 0, n, b, off);
            } catch (ShortBufferException e) {
                throw new IOException(e);
            }
        }
    }
}
