package io.sealpipe.commons;

import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.StreamCipher;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.security.GeneralSecurityException;
import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.Key;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import java.util.Properties;
import javax.crypto.Cipher;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.IvParameterSpec;
import org.apache.commons.crypto.cipher.CryptoCipher;

/**
 * AES-CTR for Apache Commons Crypto, on sealpipe's engines: the cipher Spark's IO encryption
 * uses when it is named in {@code spark.io.encryption.commons.config.cipher.classes} (Commons
 * Crypto's {@code commons.crypto.cipher.classes}). Commons Crypto 1.1.0 and 1.2.0 cannot load
 * OpenSSL 3 and fall back to JCE without saying so; this cipher runs on the engine that
 * {@code auto} chooses for CTR on this host ({@code ./sealpipe info} names it; {@code
 * sealpipe.engine.ctr} forces one).
 *
 * <p>Only {@code AES/CTR/NoPadding}, with 16-, 24- or 32-byte keys of algorithm AES and a 16-byte
 * {@link IvParameterSpec}. It behaves as Commons Crypto's own JCE cipher (a {@link Cipher}): the
 * same bytes (the IV is a 128-bit big-endian counter, as in Hadoop's and Commons Crypto's
 * streams), the same exceptions for bad arguments, and {@code doFinal} starts again at the IV of
 * the last {@code init}. Input and output may overlap. Not thread-safe; {@code close()} frees the
 * engine's context and zeroes the key.
 */
@SuppressWarnings("exports") // Commons Crypto's types in this API: module-info.java says why they are not "requires transitive"
public final class SealpipeCryptoCipher implements CryptoCipher {
    /** The one transformation this cipher does. */
    public static final String TRANSFORMATION = "AES/CTR/NoPadding";

    private static final int BLOCK_SIZE = 16;

    private final String transformation;
    private final CryptoEngine engine; // null: Engines.auto() at the first init
    private StreamCipher cipher;       // null until init
    private byte[] key = new byte[0];  // the key of the context in cipher, zeroed on close
    private final byte[] iv = new byte[BLOCK_SIZE];
    private boolean closed;

    /**
     * The constructor Commons Crypto's {@code CryptoCipherFactory} calls.
     *
     * @param props Commons Crypto's properties (none are read: the engine comes from sealpipe's
     *     own {@code sealpipe.engine*} system properties)
     * @param transformation must be {@value #TRANSFORMATION} (case does not matter)
     * @throws NoSuchAlgorithmException for any other transformation, naming the one supported
     */
    public SealpipeCryptoCipher(Properties props, String transformation) throws GeneralSecurityException {
        this(transformation, null);
    }

    /** On a given engine (for tests of every engine). */
    SealpipeCryptoCipher(String transformation, CryptoEngine engine) throws NoSuchAlgorithmException {
        if (transformation == null || !TRANSFORMATION.equalsIgnoreCase(transformation.trim())) {
            throw new NoSuchAlgorithmException("sealpipe's Commons Crypto cipher does " + TRANSFORMATION + " only, not "
                    + transformation + ": list another cipher class after it in commons.crypto.cipher.classes for that");
        }
        this.transformation = transformation;
        this.engine = engine;
    }

    @Override
    public int getBlockSize() {
        return BLOCK_SIZE;
    }

    @Override
    public String getAlgorithm() {
        return transformation;
    }

    /**
     * Keys the cipher and sets the counter to {@code params}' IV. A key equal to the last one
     * keeps the engine's context (Commons Crypto's streams call {@code init} at every seek).
     *
     * @param mode {@link Cipher#ENCRYPT_MODE} or {@link Cipher#DECRYPT_MODE} (the same in CTR)
     * @throws InvalidKeyException if the key is not AES or not 16, 24 or 32 bytes
     * @throws InvalidAlgorithmParameterException if {@code params} is not a 16-byte IvParameterSpec
     */
    @Override
    public void init(int mode, Key key, AlgorithmParameterSpec params)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        byte[] newIv = InitArguments.check(mode, key, params, "AES/CTR in Commons Crypto streams");
        byte[] newKey = InitArguments.rawKey(key);
        try {
            if (newKey.length != 16 && newKey.length != 24 && newKey.length != 32) {
                throw new InvalidKeyException("Invalid AES key length: " + newKey.length + " bytes");
            }
            checkOpen();
            if (cipher != null && MessageDigest.isEqual(newKey, this.key)) {
                cipher.reset(newIv);
            } else {
                StreamCipher fresh;
                try {
                    fresh = (engine != null ? engine : Engines.auto()).newAesCtr(newKey, newIv);
                } catch (InvalidKeyException e) {
                    throw e;
                } catch (GeneralSecurityException e) {
                    throw new InvalidKeyException("the engine refused the key: " + e.getMessage(), e);
                }
                release();
                cipher = fresh;
                this.key = newKey.clone();
            }
            System.arraycopy(newIv, 0, iv, 0, BLOCK_SIZE);
        } finally {
            Arrays.fill(newKey, (byte) 0);
        }
    }

    @Override
    public int update(ByteBuffer inBuffer, ByteBuffer outBuffer) throws ShortBufferException {
        checkBuffers(inBuffer, outBuffer);
        return transform(inBuffer, outBuffer);
    }

    @Override
    public int update(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset)
            throws ShortBufferException {
        checkArrays(input, inputOffset, inputLen, output, outputOffset);
        return transform(input, inputOffset, inputLen, output, outputOffset);
    }

    /** {@link #update}, then the counter starts again at the IV of the last {@code init}, as a JCE cipher's does. */
    @Override
    public int doFinal(ByteBuffer inBuffer, ByteBuffer outBuffer) throws ShortBufferException {
        checkBuffers(inBuffer, outBuffer);
        int n = transform(inBuffer, outBuffer);
        cipher.reset(iv);
        return n;
    }

    /** {@link #update}, then the counter starts again at the IV of the last {@code init}, as a JCE cipher's does. */
    @Override
    public int doFinal(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset)
            throws ShortBufferException {
        checkArrays(input, inputOffset, inputLen, output, outputOffset);
        int n = transform(input, inputOffset, inputLen, output, outputOffset);
        cipher.reset(iv);
        return n;
    }

    /** Frees the engine's context and zeroes the key; idempotent. Every later call fails. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            release();
            Arrays.fill(iv, (byte) 0);
        }
    }

    private void release() {
        if (cipher != null) {
            cipher.close();
            cipher = null;
        }
        Arrays.fill(key, (byte) 0);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this cipher was closed");
        }
    }

    private void checkInitialized() {
        checkOpen();
        if (cipher == null) {
            throw new IllegalStateException("Cipher not initialized");
        }
    }

    /** The checks of {@link Cipher#update(ByteBuffer, ByteBuffer)}, in its order. */
    private void checkBuffers(ByteBuffer in, ByteBuffer out) throws ShortBufferException {
        checkInitialized();
        if (in == null || out == null) {
            throw new IllegalArgumentException("Buffers must not be null");
        }
        if (in == out) {
            throw new IllegalArgumentException("Input and output buffers must not be the same object, consider using"
                    + " buffer.duplicate()");
        }
        if (out.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        if (out.remaining() < in.remaining()) {
            throw new ShortBufferException("Need at least " + in.remaining() + " bytes of space in output buffer");
        }
    }

    /** The checks of {@link Cipher#update(byte[], int, int, byte[], int)}. */
    private void checkArrays(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset)
            throws ShortBufferException {
        checkInitialized();
        if (input == null || inputOffset < 0 || inputLen > input.length - inputOffset || inputLen < 0
                || outputOffset < 0) {
            throw new IllegalArgumentException("Bad arguments");
        }
        if (inputLen > 0 && (output == null || output.length - outputOffset < inputLen)) {
            throw new ShortBufferException("Output buffer too short: " + (output == null ? 0 : output.length - outputOffset)
                    + " bytes given, " + inputLen + " bytes needed");
        }
    }

    private int transform(ByteBuffer in, ByteBuffer out) {
        if (partlyOverlap(in, out)) {
            return throughCopy(in, out);
        }
        try {
            return cipher.update(in, out);
        } catch (IllegalArgumentException e) {
            if (in.isDirect() && out.isDirect()) {
                return throughCopy(in, out); // two direct views of one memory that partly overlap: the engine refuses them
            }
            throw e;
        }
    }

    private int throughCopy(ByteBuffer in, ByteBuffer out) {
        ByteBuffer copy = ByteBuffer.allocate(in.remaining());
        copy.put(in).flip();
        return cipher.update(copy, out);
    }

    private int transform(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset) {
        if (inputLen == 0) {
            return 0;
        }
        if (input == output && inputOffset != outputOffset
                && inputOffset < outputOffset + inputLen && outputOffset < inputOffset + inputLen) {
            input = Arrays.copyOfRange(input, inputOffset, inputOffset + inputLen); // a partial overlap
            inputOffset = 0;
        }
        return cipher.update(input, inputOffset, inputLen, output, outputOffset);
    }

    /** Whether two views of one array share bytes, other than exactly in place. */
    private static boolean partlyOverlap(ByteBuffer in, ByteBuffer out) {
        int n = in.remaining();
        if (n == 0 || !in.hasArray() || !out.hasArray() || in.array() != out.array()) {
            return false;
        }
        int a = in.arrayOffset() + in.position();
        int b = out.arrayOffset() + out.position();
        return a != b && a < b + n && b < a + n;
    }
}
