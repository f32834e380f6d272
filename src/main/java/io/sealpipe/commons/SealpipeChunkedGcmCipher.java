package io.sealpipe.commons;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.Engines;
import io.sealpipe.gcm.GcmOpener;
import io.sealpipe.gcm.GcmSealer;
import io.sealpipe.gcm.GcmStreams;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.InvalidParameterException;
import java.security.Key;
import java.security.NoSuchAlgorithmException;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.Properties;
import javax.crypto.Cipher;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.IvParameterSpec;
import org.apache.commons.crypto.cipher.CryptoCipher;

/**
 * Authenticated encryption for Apache Commons Crypto's streams, and so for Spark's IO encryption:
 * named in {@code spark.io.encryption.commons.config.cipher.classes}, it seals every stream
 * Spark encrypts (shuffle and spill files, cached and broadcast blocks) as one
 * c2sp.org/chunked-encryption message of AES-GCM chunks, on the engine {@code auto} chooses for
 * GCM. A reader of a modified, reordered, truncated or extended stream gets {@link
 * StreamAuthenticationException} (an {@code IOException}), and never a byte that was not
 * authenticated (the authenticated chunks before the damage may come first). docs/FORMAT.md
 * gives the format byte by byte, docs/spark.md how to turn it on and what it protects.
 *
 * <p>Per stream: Spark writes its random 16-byte IV before the stream, and passes its key and
 * that IV to {@link #init}; the message's key, nonces and key commitment are derived from the
 * key, a random salt this cipher chooses and a context that ends with the IV, so a modified IV
 * fails the commitment. Keys must be 16 or 32 bytes ({@code spark.io.encryption.keySizeBits} 128
 * or 256).
 *
 * <p><b>Only for Commons Crypto's {@code CryptoOutputStream} and {@code CryptoInputStream}</b>
 * (not the CTR or positioned streams, which assume a counter mode), or a caller that uses it the
 * same way: {@code init} once per stream; {@code update} with all input, writing the header and
 * every whole chunk; {@code doFinal} at the end of the stream, sealing the final chunk or
 * checking it. The decrypting side holds back the last authenticated chunk until {@code
 * doFinal}, so a stream read up to a known length still reaches its end and its final check.
 * Output comes in whole chunks, so {@link #getBlockSize()} is the streams' buffer size, and
 * their buffers (in: the buffer size; out: twice it) hold what each call writes. That needs a
 * buffer of at least {@value #MIN_BUFFER_SIZE} bytes: the constructor sets {@code
 * commons.crypto.stream.buffer.size} to that when it is not set (Commons Crypto's streams read it
 * after they made the cipher), and refuses a smaller one. A stream made by one of their
 * protected constructors takes its buffer size as given: give it at least {@link
 * #getBlockSize()} (below that, its input buffer has no room: writing then fails here, and
 * reading would wait forever without calling the cipher).
 *
 * <p><b>Errors:</b> {@code update} and {@code doFinal} throw {@link StreamAuthenticationException}
 * when a check fails, <b>though their signatures do not declare it</b>: Commons Crypto's streams
 * then throw it from {@code read} as it is (they wrap only the checked exceptions they catch).
 * After any failure, every call but {@code init} and {@code close} throws again, and the keys are
 * zeroed: a stream whose writing failed is never finished, so its {@code close()} fails and
 * leaves a message every reader rejects as truncated. <b>Discard a {@code CryptoInputStream}
 * after any {@code IOException}</b>: its {@code skip} clears its output buffer before it reads,
 * so after its input failed there, a later read could return stale bytes (Spark never reads
 * such a stream again). Not thread-safe; {@code doFinal} and {@code close()} free the engine's
 * context and zero the keys.
 */
@SuppressWarnings("exports") // Commons Crypto's types in this API: module-info.java says why they are not "requires transitive"
public final class SealpipeChunkedGcmCipher implements CryptoCipher {
    /** The buffer size that Commons Crypto's streams need with this cipher, at least. */
    public static final int MIN_BUFFER_SIZE = 32 * 1024;

    /** Commons Crypto's property for its streams' buffer size. */
    public static final String BUFFER_SIZE_KEY = "commons.crypto.stream.buffer.size";

    /** The property as Spark names it (Spark passes {@code spark.io.encryption.commons.config.*} on). */
    static final String SPARK_BUFFER_SIZE_KEY = "spark.io.encryption.commons.config.stream.buffer.size";

    /** Ahead of Spark's IV in the context of each message (docs/FORMAT.md). */
    static final byte[] CONTEXT_LABEL = "io.sealpipe.commons.SealpipeChunkedGcmCipher\0".getBytes(StandardCharsets.US_ASCII);

    private static final int IV_LENGTH = InitArguments.IV_LENGTH;

    private final String transformation;
    private final int bufferSize;
    private final CryptoEngine engine;
    private GcmStreams streams;        // the key and context of the last init, until its message ends
    private boolean encrypting;
    private GcmSealer sealer;          // the message being written or read: made at the first call after init
    private GcmOpener opener;
    private boolean ended;             // doFinal completed the message of the last init
    private Throwable failure;         // what a call threw: every later call throws again
    private boolean closed;

    /**
     * The constructor Commons Crypto's {@code CryptoCipherFactory} calls.
     *
     * @param props Commons Crypto's properties, those of the stream being made: if {@value
     *     #BUFFER_SIZE_KEY} is not set, it is set here to {@value #MIN_BUFFER_SIZE}
     * @param transformation what Spark asks for, {@code AES/CTR/NoPadding}, or {@code
     *     AES/GCM/NoPadding}; either way this cipher seals chunks in GCM
     * @throws NoSuchAlgorithmException for another transformation
     * @throws InvalidParameterException if the buffer size is set below {@value #MIN_BUFFER_SIZE},
     *     saying what to set
     */
    public SealpipeChunkedGcmCipher(Properties props, String transformation) throws GeneralSecurityException {
        this(props, transformation, null);
    }

    /** On a given engine (for tests of every engine). */
    SealpipeChunkedGcmCipher(Properties props, String transformation, CryptoEngine engine)
            throws NoSuchAlgorithmException {
        String t = transformation == null ? "" : transformation.trim().toUpperCase(Locale.ROOT);
        if (!t.equals("AES/CTR/NOPADDING") && !t.equals("AES/GCM/NOPADDING")) {
            throw new NoSuchAlgorithmException("sealpipe's chunked GCM cipher takes the place of AES/CTR/NoPadding (what"
                    + " Spark asks for) or AES/GCM/NoPadding, not " + transformation);
        }
        this.transformation = transformation;
        this.bufferSize = bufferSize(Objects.requireNonNull(props, "props"));
        this.engine = engine != null ? engine : Engines.auto();
    }

    /** The buffer size the streams will read from {@code props}, set to the minimum when absent. */
    private static int bufferSize(Properties props) {
        String value = props.getProperty(BUFFER_SIZE_KEY);
        if (value == null || value.isEmpty()) { // Commons Crypto's streams take an empty value as unset too
            props.setProperty(BUFFER_SIZE_KEY, Integer.toString(MIN_BUFFER_SIZE));
            return MIN_BUFFER_SIZE;
        }
        int size;
        try {
            size = Integer.parseInt(value); // as Commons Crypto's streams parse it
        } catch (NumberFormatException e) {
            size = -1;
        }
        if (size < MIN_BUFFER_SIZE) {
            throw new InvalidParameterException(BUFFER_SIZE_KEY + " is " + value + ", and sealpipe's chunked GCM cipher"
                    + " needs a stream buffer of at least " + MIN_BUFFER_SIZE + " bytes: set " + SPARK_BUFFER_SIZE_KEY
                    + " (in Spark; " + BUFFER_SIZE_KEY + " in Commons Crypto) to " + MIN_BUFFER_SIZE
                    + " or more, or leave it unset");
        }
        return size;
    }

    /**
     * The streams' buffer size, not AES's block: Commons Crypto's streams give the cipher an
     * output buffer of their buffer size plus this, which holds the whole chunks a call writes.
     */
    @Override
    public int getBlockSize() {
        return bufferSize;
    }

    @Override
    public String getAlgorithm() {
        return transformation;
    }

    /**
     * Starts a new message: keyed by {@code key}, bound to {@code params}' 16-byte IV.
     *
     * @param mode {@link Cipher#ENCRYPT_MODE} or {@link Cipher#DECRYPT_MODE}
     * @throws InvalidKeyException if the key is not AES of 16 or 32 bytes (AES-192 has no
     *     instantiation of the format: set {@code spark.io.encryption.keySizeBits} to 128 or 256)
     * @throws InvalidAlgorithmParameterException if {@code params} is not a 16-byte IvParameterSpec
     */
    @Override
    public void init(int mode, Key key, AlgorithmParameterSpec params)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        byte[] iv = InitArguments.check(mode, key, params, "sealpipe's chunked GCM cipher");
        byte[] raw = InitArguments.rawKey(key);
        try {
            if (raw.length != 16 && raw.length != 32) {
                throw new InvalidKeyException("Invalid key length: " + raw.length + " bytes; sealpipe's chunked GCM"
                        + " cipher takes AES-128 or AES-256 keys (Spark: spark.io.encryption.keySizeBits 128 or 256)");
            }
            checkOpen();
            byte[] context = Arrays.copyOf(CONTEXT_LABEL, CONTEXT_LABEL.length + IV_LENGTH);
            System.arraycopy(iv, 0, context, CONTEXT_LABEL.length, IV_LENGTH);
            // With the engine and parallelism given, build() has nothing left that can fail.
            GcmStreams fresh = GcmStreams.builder().key(raw).context(context).engine(engine).parallelism(1).build();
            release();
            streams = fresh;
            encrypting = mode == Cipher.ENCRYPT_MODE;
            ended = false;
            failure = null;
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }

    /**
     * Encrypting: takes all of {@code inBuffer} and writes the header (first) and every chunk it
     * completes. Decrypting: takes all of {@code inBuffer} and writes the plaintext of every
     * authenticated chunk that has an authenticated chunk after it; a failed check throws
     * {@link StreamAuthenticationException}, undeclared (see the class comment).
     *
     * @throws ShortBufferException if {@code outBuffer} cannot hold that (nothing is consumed)
     */
    @Override
    public int update(ByteBuffer inBuffer, ByteBuffer outBuffer) throws ShortBufferException {
        checkBuffers(inBuffer, outBuffer);
        try {
            if (inBuffer.capacity() == 0 && outBuffer.capacity() == bufferSize) {
                // A Commons Crypto stream made (by a protected constructor) with a buffer smaller
                // than getBlockSize(): its input buffer has no room, and its write would call
                // update with nothing, forever.
                throw new ShortBufferException("the stream's buffer is smaller than this cipher needs: set "
                        + SPARK_BUFFER_SIZE_KEY + " (" + BUFFER_SIZE_KEY + ") to " + bufferSize + " or more");
            }
            return encrypting ? sealer().update(inBuffer, outBuffer) : opener().update(inBuffer, outBuffer);
        } catch (Throwable t) {
            throw fail(t, inBuffer, outBuffer);
        }
    }

    /** As {@link #update(ByteBuffer, ByteBuffer)} on arrays. */
    @Override
    public int update(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset)
            throws ShortBufferException {
        checkArrays(input, inputOffset, inputLen, output, outputOffset);
        ByteBuffer in = inputOf(input, inputOffset, inputLen, output);
        try {
            return update(in, ByteBuffer.wrap(output).position(outputOffset));
        } finally {
            wipeCopy(in, input);
        }
    }

    /**
     * Ends the message. Encrypting: takes all of {@code inBuffer} and writes every chunk left,
     * then the final chunk. Decrypting: takes all of {@code inBuffer}, checks the final chunk and
     * writes the plaintext not written yet. The keys are then zeroed: another message needs
     * {@code init} again (unlike a JCE cipher, which starts over with the same key and IV).
     * Decrypting, a truncated message or a failed check throws {@link
     * StreamAuthenticationException}, undeclared.
     *
     * @throws ShortBufferException if {@code outBuffer} cannot hold that (nothing is consumed)
     */
    @Override
    public int doFinal(ByteBuffer inBuffer, ByteBuffer outBuffer) throws ShortBufferException {
        checkBuffers(inBuffer, outBuffer);
        try {
            int n = encrypting ? sealer().finish(inBuffer, outBuffer) : opener().finish(inBuffer, outBuffer);
            release();
            ended = true;
            return n;
        } catch (Throwable t) {
            throw fail(t, inBuffer, outBuffer);
        }
    }

    /** As {@link #doFinal(ByteBuffer, ByteBuffer)} on arrays. */
    @Override
    public int doFinal(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset)
            throws ShortBufferException {
        checkArrays(input, inputOffset, inputLen, output, outputOffset);
        ByteBuffer in = inputOf(input, inputOffset, inputLen, output);
        try {
            return doFinal(in, ByteBuffer.wrap(output).position(outputOffset));
        } finally {
            wipeCopy(in, input);
        }
    }

    /** Frees the engine's context and zeroes the keys; idempotent. Every later call fails. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            release();
        }
    }

    @Override
    public String toString() {
        return "SealpipeChunkedGcmCipher(" + transformation + ", buffer " + bufferSize + ")";
    }

    private GcmSealer sealer() {
        if (sealer == null) {
            sealer = streams.sealer();
        }
        return sealer;
    }

    private GcmOpener opener() {
        if (opener == null) {
            opener = streams.opener();
        }
        return opener;
    }

    /** Frees the message's cipher and zeroes its keys and this cipher's copy of the input key. */
    private void release() {
        if (sealer != null) {
            sealer.close();
            sealer = null;
        }
        if (opener != null) {
            opener.close();
            opener = null;
        }
        if (streams != null) {
            streams.destroy();
            streams = null;
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this cipher was closed");
        }
    }

    /** The checks of {@link Cipher#update(ByteBuffer, ByteBuffer)}, in its order. */
    private void checkBuffers(ByteBuffer in, ByteBuffer out) throws ShortBufferException {
        checkOpen();
        if (failure != null) {
            throw again(in, out);
        }
        if (ended) {
            throw new IllegalStateException("the message is complete: init the cipher again for another");
        }
        if (streams == null) {
            throw new IllegalStateException("Cipher not initialized");
        }
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
    }

    private void checkArrays(byte[] input, int inputOffset, int inputLen, byte[] output, int outputOffset) {
        checkOpen();
        if (input == null || inputOffset < 0 || inputLen < 0 || inputLen > input.length - inputOffset
                || output == null || outputOffset < 0 || outputOffset > output.length) {
            throw new IllegalArgumentException("Bad arguments");
        }
    }

    /** The input as a buffer: a copy when it is the output's array (the output runs ahead of it or behind). */
    private static ByteBuffer inputOf(byte[] input, int inputOffset, int inputLen, byte[] output) {
        return input == output ? ByteBuffer.wrap(Arrays.copyOfRange(input, inputOffset, inputOffset + inputLen))
                : ByteBuffer.wrap(input, inputOffset, inputLen);
    }

    /**
     * Records the first failure of a call, zeroes the keys, and returns it to throw; every later
     * call but {@code init} and {@code close} throws it again ({@link #again}). A message whose
     * writing failed is thus never finished: a stream's {@code close()}, which calls {@code
     * doFinal}, fails too, and leaves a message that every reader rejects as truncated.
     */
    private RuntimeException fail(Throwable t, ByteBuffer in, ByteBuffer out) throws ShortBufferException {
        failure = t;
        release();
        leaveNothingToRead(in, out);
        if (t instanceof ShortBufferException e) {
            throw e;
        }
        return sneaky(t);
    }

    /** The recorded failure again: itself if it is an authentication failure, else an IOException naming it. */
    private RuntimeException again(ByteBuffer in, ByteBuffer out) {
        if (in != null && out != null) {
            leaveNothingToRead(in, out);
        }
        if (failure instanceof StreamAuthenticationException e) {
            return sneaky(e);
        }
        return sneaky(new java.io.IOException("sealpipe's chunked GCM cipher failed earlier in this stream ("
                + failure + "), so the stream cannot go on", failure));
    }

    /**
     * Decrypting, leaves the buffers so that Commons Crypto's input stream fails again on a later
     * read, rather than returning stale bytes or looping. That stream clears its output buffer
     * before each call and flips it only after a call that returned, so a later read would
     * return whatever the buffer held: its limit goes to its position, and nothing is left to
     * read. It clears its input buffer only after a call that returned, so a later read would
     * find no room to read into, and would ask again forever: the input buffer is cleared, the
     * stream reads more (or the end), and this cipher throws again.
     */
    private void leaveNothingToRead(ByteBuffer in, ByteBuffer out) {
        if (!encrypting) {
            out.limit(out.position());
            in.clear();
        }
    }

    private static void wipeCopy(ByteBuffer in, byte[] input) {
        if (in.array() != input) {
            Arrays.fill(in.array(), (byte) 0);
        }
    }

    /** Throws a checked exception that the signature does not declare (see the class comment). */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
