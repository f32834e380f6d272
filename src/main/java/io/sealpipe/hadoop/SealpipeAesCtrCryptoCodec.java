package io.sealpipe.hadoop;

import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.StreamCipher;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Objects;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.CipherSuite;
import org.apache.hadoop.crypto.CryptoCodec;
import org.apache.hadoop.crypto.Decryptor;
import org.apache.hadoop.crypto.Encryptor;

/**
 * Hadoop's AES-CTR codec on sealpipe's engines: HDFS transparent encryption (encryption zones)
 * and MapReduce's encrypted intermediate data use it when it is first in {@code
 * hadoop.security.crypto.codec.classes.aes.ctr.nopadding}. Hadoop's own OpenSSL codec needs a
 * {@code libhadoop.so} built against OpenSSL 3, so most installations fall back to JCE; this
 * codec runs on the engine that {@code auto} chooses for CTR on the host ({@code ./sealpipe
 * info} names it; {@code sealpipe.engine.ctr} forces one).
 *
 * <p>Byte for byte what {@code JceAesCtrCryptoCodec} gives: the same cipher suite, the same
 * {@link #calculateIV} (the stream's initial IV plus the block counter, a 128-bit big-endian
 * addition), and encryptors and decryptors that take any pair of buffers, heap or direct. Their
 * context is never reset ({@link Encryptor#isContextReset()} is false: every update consumes its
 * whole input), and {@code init} with the key it already has keeps the engine's context (Hadoop's
 * streams init at every seek). Hadoop's encryptors have no {@code close()}: their native context
 * (which holds the key schedule) is freed when they become unreachable, and they keep no copy of
 * the key on the Java heap (a SHA-256 of it tells a new key from the same one).
 *
 * <p>{@link #generateSecureRandom} draws from a {@link SecureRandom}: the algorithm named in
 * {@code hadoop.security.java.secure.random.algorithm} when it is set, else the platform's
 * default.
 */
@SuppressWarnings("exports") // Hadoop's types in this API: module-info.java says why they are not "requires transitive"
public final class SealpipeAesCtrCryptoCodec extends CryptoCodec {
    /** Hadoop's configuration key for the algorithm of {@link #generateSecureRandom}. */
    static final String SECURE_RANDOM_ALGORITHM = "hadoop.security.java.secure.random.algorithm";

    private static final int BLOCK_SIZE = 16;

    private final CryptoEngine engine; // null: Engines.auto() at the first init
    private Configuration conf;
    private SecureRandom random;

    /** The constructor Hadoop's {@code CryptoCodec.getInstance} calls (then {@link #setConf}). */
    public SealpipeAesCtrCryptoCodec() {
        this(null);
    }

    /** On a given engine (for tests of every engine). */
    SealpipeAesCtrCryptoCodec(CryptoEngine engine) {
        this.engine = engine;
    }

    @Override
    public Configuration getConf() {
        return conf;
    }

    /**
     * Keeps the configuration and makes the random source it names.
     *
     * @throws IllegalArgumentException if {@code hadoop.security.java.secure.random.algorithm}
     *     names an algorithm this JVM does not have
     */
    @Override
    public void setConf(Configuration conf) {
        this.conf = conf;
        this.random = secureRandom(conf);
    }

    private static SecureRandom secureRandom(Configuration conf) {
        String algorithm = conf == null ? null : conf.getTrimmed(SECURE_RANDOM_ALGORITHM);
        if (algorithm == null || algorithm.isEmpty()) {
            return new SecureRandom();
        }
        try {
            return SecureRandom.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalArgumentException(SECURE_RANDOM_ALGORITHM + "=" + algorithm
                    + " is not a SecureRandom algorithm of this JVM: set one it has, or unset it for the default", e);
        }
    }

    @Override
    public CipherSuite getCipherSuite() {
        return CipherSuite.AES_CTR_NOPADDING;
    }

    @Override
    public Encryptor createEncryptor() throws GeneralSecurityException {
        return new Ctr();
    }

    @Override
    public Decryptor createDecryptor() throws GeneralSecurityException {
        return new Ctr();
    }

    /**
     * The IV of the block {@code counter} blocks after the one of {@code initIV}: {@code initIV}
     * as a 128-bit big-endian number plus {@code counter} (unsigned), modulo 2^128.
     *
     * @throws IllegalArgumentException if an IV is not 16 bytes
     */
    @Override
    public void calculateIV(byte[] initIV, long counter, byte[] iv) {
        if (initIV.length != BLOCK_SIZE || iv.length != BLOCK_SIZE) {
            throw new IllegalArgumentException("AES-CTR IVs are 16 bytes, not " + initIV.length + " and " + iv.length);
        }
        int carry = 0;
        for (int i = BLOCK_SIZE - 1; i >= 0; i--) {
            int add = i >= BLOCK_SIZE - 8 ? (int) (counter >>> (8 * (BLOCK_SIZE - 1 - i))) & 0xff : 0;
            int sum = (initIV[i] & 0xff) + add + carry;
            iv[i] = (byte) sum;
            carry = sum >>> 8;
        }
    }

    @Override
    public void generateSecureRandom(byte[] bytes) {
        SecureRandom r = random;
        if (r == null) {
            r = random = secureRandom(conf);
        }
        r.nextBytes(bytes);
    }

    private static byte[] sha256(byte[] key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** Nothing to free: each encryptor and decryptor frees its own context. */
    @Override
    public void close() {
        // nothing held here
    }

    /** An encryptor or decryptor (the same in CTR). Not thread-safe, as Hadoop's. */
    private final class Ctr implements Encryptor, Decryptor {
        private StreamCipher cipher;
        /** SHA-256 of the key of {@link #cipher}: Hadoop's encryptors have no close(), so no copy of the key is kept. */
        private byte[] keyDigest;

        @Override
        public void init(byte[] key, byte[] iv) throws IOException {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(iv, "iv");
            if (key.length != 16 && key.length != 24 && key.length != 32) {
                throw new IOException("AES keys are 16, 24 or 32 bytes, not " + key.length);
            }
            if (iv.length != BLOCK_SIZE) {
                throw new IOException("AES-CTR IVs are 16 bytes, not " + iv.length);
            }
            byte[] digest = sha256(key);
            if (cipher != null && MessageDigest.isEqual(digest, keyDigest)) {
                cipher.reset(iv);
                return;
            }
            StreamCipher fresh;
            try {
                fresh = (engine != null ? engine : Engines.auto()).newAesCtr(key, iv);
            } catch (GeneralSecurityException e) {
                throw new IOException("the engine refused the key: " + e.getMessage(), e);
            }
            if (cipher != null) {
                cipher.close();
            }
            cipher = fresh;
            keyDigest = digest;
        }

        @Override
        public boolean isContextReset() {
            return false;
        }

        @Override
        public void encrypt(ByteBuffer inBuffer, ByteBuffer outBuffer) throws IOException {
            transform(inBuffer, outBuffer);
        }

        @Override
        public void decrypt(ByteBuffer inBuffer, ByteBuffer outBuffer) throws IOException {
            transform(inBuffer, outBuffer);
        }

        /** All of {@code in} into {@code out}; failures as IOExceptions, as Hadoop's JCE codec reports them. */
        private void transform(ByteBuffer in, ByteBuffer out) throws IOException {
            if (cipher == null) {
                throw new IOException("this encryptor or decryptor was not initialized: call init(key, iv) first");
            }
            if (out.remaining() < in.remaining()) {
                throw new IOException("the output buffer has room for " + out.remaining() + " bytes, the input has "
                        + in.remaining());
            }
            try {
                cipher.update(in, out);
            } catch (RuntimeException e) {
                throw new IOException(e.getMessage(), e);
            }
        }
    }
}
