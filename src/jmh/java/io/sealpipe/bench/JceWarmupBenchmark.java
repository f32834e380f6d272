package io.sealpipe.bench;

import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.StreamCipher;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
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
 * Checks the reason the jce engine slices: after the same short warm-up (2 &times; 2 s, set
 * here so that a plain run of this class is the check), its 1 MiB calls should be at least as
 * fast per byte as its 16 KiB calls. Each size and implementation runs in a fresh JVM, so all
 * start equally cold.
 *
 * <p>{@code impl=jce-engine} is {@code Engines.get(JCE)}, which feeds SunJCE at most
 * {@code JceEngine.SLICE} (16 KiB) per call; {@code impl=sunjce-whole} is the baseline, a plain
 * {@link Cipher} from the default provider given the whole buffer in one call, as most code
 * does. MB/s = ops/s &times; size / 10<sup>6</sup>.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="JceWarmupBenchmark -rf json -rff target/jmh-jce-warmup.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class JceWarmupBenchmark {

    @Param({"jce-engine", "sunjce-whole"})
    public String impl;

    @Param({"16384", "1048576"})
    public int size;

    private Op op;
    private byte[] plain;
    private byte[] out;
    private final Fixtures.Nonces nonces = new Fixtures.Nonces();
    private byte[] sealed;
    private byte[] sealedNonce;

    /** The three operations under test, on one implementation. */
    private interface Op extends AutoCloseable {
        void ctr(byte[] in, int length, byte[] out);

        int seal(byte[] nonce, byte[] in, int length, byte[] out);

        int open(byte[] nonce, byte[] in, int length, byte[] out) throws AEADBadTagException;

        @Override
        void close();
    }

    /** The jce engine, through the same API as every other engine. */
    private static final class EngineOp implements Op {
        private final StreamCipher ctr;
        private final AeadCipher gcm;

        EngineOp(byte[] key, byte[] iv) throws GeneralSecurityException {
            CryptoEngine engine = Engines.get(EngineKind.JCE);
            ctr = engine.newAesCtr(key, iv);
            gcm = engine.newAesGcm(key);
        }

        @Override
        public void ctr(byte[] in, int length, byte[] out) {
            ctr.update(in, 0, length, out, 0);
        }

        @Override
        public int seal(byte[] nonce, byte[] in, int length, byte[] out) {
            return gcm.seal(nonce, null, in, 0, length, out, 0);
        }

        @Override
        public int open(byte[] nonce, byte[] in, int length, byte[] out) throws AEADBadTagException {
            return gcm.open(nonce, null, in, 0, length, out, 0);
        }

        @Override
        public void close() {
            ctr.close();
            gcm.close();
        }
    }

    /** Plain SunJCE, one provider call per message: no slicing. */
    private static final class WholeBufferOp implements Op {
        private final Cipher ctr;
        private final Cipher gcm;
        private final SecretKeySpec key;

        WholeBufferOp(byte[] key, byte[] iv) throws GeneralSecurityException {
            this.key = new SecretKeySpec(key, "AES");
            ctr = Cipher.getInstance("AES/CTR/NoPadding");
            ctr.init(Cipher.ENCRYPT_MODE, this.key, new IvParameterSpec(iv));
            gcm = Cipher.getInstance("AES/GCM/NoPadding");
        }

        @Override
        public void ctr(byte[] in, int length, byte[] out) {
            try {
                ctr.update(in, 0, length, out, 0);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public int seal(byte[] nonce, byte[] in, int length, byte[] out) {
            try {
                gcm.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, nonce));
                return gcm.doFinal(in, 0, length, out, 0);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public int open(byte[] nonce, byte[] in, int length, byte[] out) throws AEADBadTagException {
            try {
                gcm.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, nonce));
                return gcm.doFinal(in, 0, length, out, 0);
            } catch (AEADBadTagException e) {
                throw e;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() {
            // Nothing native to free.
        }
    }

    @Setup
    public void setUp() throws GeneralSecurityException {
        byte[] key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        byte[] iv = Fixtures.bytes(16, 2);
        op = switch (impl) {
            case "jce-engine" -> new EngineOp(key, iv);
            case "sunjce-whole" -> new WholeBufferOp(key, iv);
            default -> throw new IllegalArgumentException("impl must be jce-engine or sunjce-whole, not " + impl);
        };
        plain = Fixtures.bytes(size, 4);
        out = new byte[size + AeadCipher.TAG_LENGTH];
        sealedNonce = nonces.next().clone();
        sealed = new byte[size + AeadCipher.TAG_LENGTH];
        op.seal(sealedNonce, plain, size, sealed);
        op.open(sealedNonce, sealed, sealed.length, out);
        if (!Arrays.equals(out, 0, size, plain, 0, size)) {
            throw new IllegalStateException(impl + ": GCM round trip changed the data");
        }
    }

    @TearDown
    public void tearDown() {
        op.close();
    }

    @Benchmark
    public byte[] ctrEncrypt() {
        op.ctr(plain, size, out);
        return out;
    }

    @Benchmark
    public int gcmSeal() {
        return op.seal(nonces.next(), plain, size, out);
    }

    @Benchmark
    public int gcmOpen() throws AEADBadTagException {
        return op.open(sealedNonce, sealed, sealed.length, out);
    }
}
