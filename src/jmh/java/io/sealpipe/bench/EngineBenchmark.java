package io.sealpipe.bench;

import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.Hmac;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.StreamCipher;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import javax.crypto.AEADBadTagException;
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
 * Throughput of every engine's primitives on heap {@code byte[]} buffers: one operation is one
 * call over a message of {@code size} bytes (for GCM, one whole message: nonce, data, tag).
 *
 * <p>MB/s = ops/s &times; size / 10<sup>6</sup>; {@link JmhToMbps} prints that table from the
 * JSON results. The objects are created once per trial, as a stream would hold them, so the
 * numbers exclude key set-up and include each call's fixed cost (argument checks, JNI/JNA
 * transition, pinning, IV or nonce set-up), which is what separates 256 B from 16 KiB.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="EngineBenchmark -p engine=openssl-jni -rf json -rff target/jmh-result.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class EngineBenchmark {

    /**
     * {@link EngineKind#id()} of the engine under test, or {@code auto} ({@code Engines.auto()}:
     * each operation on its chosen engine, which warms up in the background during JMH's
     * warm-up). accp has no CTR and CFB: run it on the GCM and HMAC benchmarks only
     * ({@code "EngineBenchmark.(gcm|hmac)" -p engine=accp}).
     */
    @Param({"openssl-jni", "openssl-jna", "jce", "accp", "auto"})
    public String engine;

    /** Plaintext bytes per call: a small record, sealpipe's 16 KiB chunk, a large write. */
    @Param({"256", "16384", "1048576"})
    public int size;

    private StreamCipher ctr;
    private StreamCipher cfb;
    private AeadCipher gcm;
    private Hmac hmac;

    private byte[] plain;
    /** Output of every operation; size + 16 bytes, room for a GCM tag. */
    private byte[] out;
    private byte[] mac;
    private final Fixtures.Nonces nonces = new Fixtures.Nonces();

    /** One message sealed in setup and opened by {@link #gcmOpen()} again and again. */
    private byte[] sealed;
    private byte[] sealedNonce;

    @Setup
    public void setUp() throws GeneralSecurityException {
        CryptoEngine e = Engines.forName(engine);
        byte[] key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        byte[] iv = Fixtures.bytes(16, 2);
        if (e.kindFor(Operation.CTR).supports(Operation.CTR)) {
            ctr = e.newAesCtr(key, iv);
            cfb = e.newAesCfb(key, iv, true);
        }
        gcm = e.newAesGcm(key);
        hmac = e.newHmacSha256(Fixtures.bytes(Fixtures.KEY_LENGTH, 3));

        plain = Fixtures.bytes(size, 4);
        out = new byte[size + AeadCipher.TAG_LENGTH];
        mac = new byte[hmac.macLength()];

        sealedNonce = nonces.next().clone();
        sealed = new byte[size + AeadCipher.TAG_LENGTH];
        gcm.seal(sealedNonce, null, plain, 0, size, sealed, 0);
        // Fail the trial now, not with a misleading score, if open does not round-trip.
        try {
            gcm.open(sealedNonce, null, sealed, 0, sealed.length, out, 0);
        } catch (AEADBadTagException ex) {
            throw new IllegalStateException(engine + ": cannot open what it sealed", ex);
        }
        if (!Arrays.equals(out, 0, size, plain, 0, size)) {
            throw new IllegalStateException(engine + ": GCM round trip changed the data");
        }
    }

    @TearDown
    public void tearDown() {
        if (ctr != null) {
            ctr.close();
            cfb.close();
        }
        gcm.close();
        hmac.close();
    }

    /** AES-256-CTR; the counter runs on across calls, as in a stream. */
    @Benchmark
    public byte[] ctrEncrypt() {
        ctr.update(plain, 0, size, out, 0);
        return out;
    }

    /** AES-256-CFB128 encryption; the feedback runs on across calls. */
    @Benchmark
    public byte[] cfbEncrypt() {
        cfb.update(plain, 0, size, out, 0);
        return out;
    }

    /** AES-256-GCM seal of one message with a fresh nonce, no AAD. */
    @Benchmark
    public int gcmSeal() {
        return gcm.seal(nonces.next(), null, plain, 0, size, out, 0);
    }

    /** AES-256-GCM open (verify and decrypt) of the message sealed in setup. */
    @Benchmark
    public int gcmOpen() throws AEADBadTagException {
        return gcm.open(sealedNonce, null, sealed, 0, sealed.length, out, 0);
    }

    /** HMAC-SHA256 of one message: update, then doFinal (which restarts for the next). */
    @Benchmark
    public byte[] hmacSha256() {
        hmac.update(plain, 0, size);
        hmac.doFinal(mac, 0);
        return mac;
    }

    /** The old scheme: encrypt with CFB, then HMAC-SHA256 the ciphertext. */
    @Benchmark
    public byte[] cfbThenHmac() {
        cfb.update(plain, 0, size, out, 0);
        hmac.update(out, 0, size);
        hmac.doFinal(mac, 0);
        return mac;
    }
}
