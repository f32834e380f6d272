package io.sealpipe.ctr;

import io.sealpipe.AesKey;
import io.sealpipe.Keys;
import io.sealpipe.Parallelism;
import io.sealpipe.PositionedInput;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.internal.BuilderKey;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.CiphertextSink;
import io.sealpipe.internal.CiphertextSource;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.CtrMath;
import io.sealpipe.internal.KeyAccess;
import io.sealpipe.internal.Workers;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.security.auth.Destroyable;

/**
 * AES-CTR streams byte-compatible with Hadoop's {@code CryptoOutputStream}/{@code
 * CryptoInputStream} and Commons Crypto's {@code CtrCryptoOutputStream}: no header, the
 * ciphertext has the plaintext's length, and the byte at stream position {@code p} is encrypted
 * with counter block IV + p / 16 (128-bit, big-endian, with carry).
 *
 * <p><b>CTR gives confidentiality only.</b> Nothing detects a modified, truncated or reordered
 * ciphertext; a flipped ciphertext bit flips the same plaintext bit. Never encrypt two streams
 * with the same key and IV. Use the authenticated chunked GCM streams where you can; use these
 * where the Hadoop/Spark format is required.
 *
 * <p><b>One encrypted stream per instance.</b> Two streams encrypted with one key and IV share
 * their key stream: XORing the two ciphertexts gives the XOR of the plaintexts. So an instance
 * encrypts at most one stream: a second {@code encrypt} call (any overload, from any thread)
 * throws {@link IllegalStateException}. For the next stream, build another instance with a fresh
 * random IV, or call {@link #withIv(byte[])}, which returns a copy with the same key, engine and
 * settings and the IV you give it. {@code decrypt} may be called any number of times.
 *
 * <p>An instance is thread-safe and, apart from that one-stream mark, immutable; each stream it
 * makes is not thread-safe (except positioned reads, see {@link CryptoInputStream}). It holds a
 * copy of the key until {@link #destroy()}. Each stream takes what it needs when it is made (its
 * cipher, and a copy of the key that it zeroes by the time it closes), so destroying the instance
 * never breaks a stream already made.
 *
 * <pre>{@code
 * CtrStreams ctr = CtrStreams.builder().key(key).iv(iv).build();
 * try (OutputStream out = ctr.encrypt(Files.newOutputStream(path))) {
 *     out.write(data);
 * }
 * try (var in = ctr.decrypt(FileChannel.open(path))) {       // a CryptoInputStream
 *     in.seek(1000);
 *     in.readFully(50_000, block, 0, block.length);   // positioned, thread-safe
 * }
 * CtrStreams next = ctr.withIv(nextIv);               // same key, for the next stream
 * }</pre>
 */
public final class CtrStreams implements Destroyable {
    /** Default buffer size, 64 KiB. */
    public static final int DEFAULT_BUFFER_SIZE = 64 * 1024;
    /** Smallest buffer size accepted. */
    public static final int MIN_BUFFER_SIZE = 512;

    /** Set by the first encrypt call: an instance encrypts one stream only (see the class comment). */
    private final AtomicBoolean encrypted = new AtomicBoolean();

    private final AesKey key;
    private final byte[] iv;
    private final CryptoEngine engine;
    private final int bufferSize;
    private final long streamOffset;
    private final boolean closeUnderlying;
    private final int parallelism;
    private final Executor executor;

    private CtrStreams(Builder b) {
        this.iv = b.iv.clone();
        this.engine = b.engine != null ? b.engine : Engines.auto();
        this.bufferSize = b.bufferSize;
        this.streamOffset = b.streamOffset;
        this.closeUnderlying = b.closeUnderlying;
        this.parallelism = b.parallelism;
        this.executor = b.executor != null ? b.executor : Workers.shared();
        this.key = b.key.forInstance(); // last: nothing after it can fail and strand the key
    }

    /**
     * Starts a builder. The key and IV are required; the defaults are the engine of
     * {@link Engines#auto()}, a 64 KiB buffer, stream offset 0, {@code closeUnderlying(true)} and
     * parallelism 1 (or {@value Parallelism#PROPERTY}).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Encrypts what is written to the returned stream into {@code out}, from stream position
     * {@link Builder#streamOffset(long) streamOffset}.
     *
     * @param out receives the ciphertext, as long as the plaintext
     * @return the encrypting stream, for one thread at a time
     * @throws IllegalStateException if this instance has already encrypted a stream (see the
     *     class comment) or was {@link #destroy() destroyed}
     */
    public CryptoOutputStream encrypt(OutputStream out) {
        markEncrypted();
        return new CryptoOutputStream(CiphertextSink.of(out), this);
    }

    /**
     * Encrypts what is written to the returned stream (or channel) into {@code out}, from stream
     * position {@link Builder#streamOffset(long) streamOffset}.
     *
     * @param out receives the ciphertext, as long as the plaintext
     * @return the encrypting stream (also a channel), for one thread at a time
     * @throws IllegalStateException if this instance has already encrypted a stream (see the
     *     class comment) or was {@link #destroy() destroyed}
     */
    public CryptoOutputStream encrypt(WritableByteChannel out) {
        markEncrypted();
        return new CryptoOutputStream(CiphertextSink.of(out), this);
    }

    /** Lets exactly one encrypt call through, whatever the threads: a second one would reuse the key stream. */
    private void markEncrypted() {
        if (!encrypted.compareAndSet(false, true)) {
            throw new IllegalStateException("this CtrStreams' key and IV were already used for a stream, and a second"
                    + " stream with them would reuse its key stream: build another CtrStreams with a fresh random IV,"
                    + " or call withIv(newIv) for one more stream with the same key");
        }
    }

    /**
     * A new instance with this one's key, engine and settings and IV {@code iv}, ready to
     * encrypt one more stream (or to decrypt one encrypted with that IV). The IV must never have
     * been used with this key before; a random one ({@code SecureRandom}) is the safe choice.
     *
     * @param iv 16 bytes, copied
     * @return a new instance that has not encrypted yet
     * @throws IllegalArgumentException if {@code iv} is not 16 bytes or is this instance's IV
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public CtrStreams withIv(byte[] iv) {
        Checks.length("iv", iv, 16);
        if (Arrays.equals(iv, this.iv)) {
            throw new IllegalArgumentException("iv is this instance's IV: withIv needs a different one, never used"
                    + " with this key before");
        }
        return new CtrStreams(this, iv);
    }

    /** A copy of {@code from} with another IV, not yet used for encryption. */
    private CtrStreams(CtrStreams from, byte[] iv) {
        this.key = KeyAccess.copy(from.key);
        this.iv = iv.clone();
        this.engine = from.engine;
        this.bufferSize = from.bufferSize;
        this.streamOffset = from.streamOffset;
        this.closeUnderlying = from.closeUnderlying;
        this.parallelism = from.parallelism;
        this.executor = from.executor;
    }

    /**
     * Decrypts {@code in} sequentially; {@code seek} and positioned reads are not available (for a
     * Hadoop {@code FSDataInputStream} they are, through {@link #decrypt(PositionedInput)}).
     *
     * @param in the ciphertext; its first byte is at stream position
     *     {@link Builder#streamOffset(long) streamOffset}
     * @return the decrypting stream, for one thread at a time
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public CryptoInputStream decrypt(InputStream in) {
        return new CryptoInputStream(CiphertextSource.of(in), this);
    }

    /**
     * Decrypts {@code in}. If it is a {@link SeekableByteChannel} (such as a {@code FileChannel}),
     * the stream can seek and serve positioned reads; its current position holds the byte at
     * stream position {@link Builder#streamOffset(long) streamOffset}. The stream then keeps its
     * own position and reads the channel at explicit positions (under the channel's lock, or
     * with {@code FileChannel}'s positioned read), leaving the channel's position where it was.
     *
     * @param in the ciphertext, from its current position
     * @return the decrypting stream (also a channel)
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public CryptoInputStream decrypt(ReadableByteChannel in) {
        return new CryptoInputStream(CiphertextSource.of(in), this);
    }

    /**
     * Decrypts the ciphertext held in memory between {@code in}'s position and its limit, for
     * example a mapped file region ({@code FileChannel.map}) or a received shuffle block. Its
     * position holds stream position {@link Builder#streamOffset(long) streamOffset}. The stream
     * decrypts straight from the buffer into the reader's array (no copy in between), can seek
     * and serves positioned reads; {@code in}'s own position and limit are left alone, and its
     * content must not change while the stream is in use.
     *
     * <p><b>A mapped file must not shrink while it is read.</b> The pages of a mapping past the
     * file's new end fault when touched (SIGBUS), and the engines read the buffer without a
     * check. A fault in native code <b>kills the JVM</b>: {@code openssl-jni} always reads the
     * buffer there, {@code openssl-jna} may; a fault in Java code ({@code jce}) is thrown as
     * {@link InternalError}. Neither is an {@code IOException} to handle.
     * If another process may truncate the file, read it with {@link #decrypt(ReadableByteChannel)}
     * over its {@code FileChannel} instead (seekable too), where a cut is the end of the stream,
     * at the cost of one copy.
     *
     * @param in the ciphertext, heap or direct
     * @return the decrypting stream, seekable
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public CryptoInputStream decrypt(ByteBuffer in) {
        Objects.requireNonNull(in, "in");
        return new CryptoInputStream(CiphertextSource.of(in), this);
    }

    /**
     * Decrypts ciphertext read by position, such as a Hadoop {@code FSDataInputStream}'s
     * positioned reads: {@code ctr.decrypt(fsIn::read)}. The input's position 0 holds stream
     * position {@link Builder#streamOffset(long) streamOffset}. The stream can seek and serves
     * positioned reads, thread-safe as the input's reads are (Hadoop requires them to be); its
     * sequential reads are positioned reads at a position of its own, so they never move the
     * input. Closing the stream does not close what the input reads from. {@code available()}
     * counts only decrypted bytes not yet returned, as the input has no size.
     *
     * @param in reads the ciphertext by position, e.g. {@code fsIn::read}
     * @return the decrypting stream, seekable
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     * @see PositionedInput
     */
    public CryptoInputStream decrypt(PositionedInput in) {
        Objects.requireNonNull(in, "in");
        return new CryptoInputStream(CiphertextSource.of(in), this);
    }

    /**
     * The engine the streams run on.
     *
     * @return the builder's engine, or the one {@link Engines#auto()} chose at build time
     */
    public CryptoEngine engine() {
        return engine;
    }

    int bufferSize() {
        return bufferSize;
    }

    long streamOffset() {
        return streamOffset;
    }

    boolean closeUnderlying() {
        return closeUnderlying;
    }

    /**
     * How many threads (the stream's own and helpers) may work on one large read or write.
     *
     * @return 1..{@link Parallelism#MAX}
     */
    public int parallelism() {
        return parallelism;
    }

    /** Where helper tasks run: the builder's executor, or sealpipe's shared workers. */
    Executor executor() {
        return executor;
    }

    /**
     * A job for runs of at least {@link CtrJob#MIN_RUN} bytes with {@code parallelism - 1} helper
     * ciphers keyed with {@code key}, or null with parallelism 1.
     */
    CtrJob newJob(AesKey key) {
        if (parallelism == 1) {
            return null;
        }
        List<StreamCipher> ciphers = new ArrayList<>(parallelism - 1);
        try {
            for (int i = 1; i < parallelism; i++) {
                ciphers.add(newCipher(key, 0)); // room for each was made above: add() allocates nothing
            }
            List<CtrJob.Runner> helpers = new ArrayList<>(ciphers.size());
            for (StreamCipher c : ciphers) {
                helpers.add(new CtrJob.Runner(c));
            }
            return new CtrJob(this, helpers, parallelism);
        } catch (RuntimeException | Error e) { // an OutOfMemoryError too: no helper cipher is left open
            Closer.closeAfter(e, ciphers);
            throw e;
        }
    }

    byte[] iv() {
        return iv;
    }

    /** A copy of the key for a stream, which zeroes it when it closes. */
    AesKey keyCopy() {
        return KeyAccess.copy(key);
    }

    /**
     * A new cipher with {@code key}, positioned at stream position {@code position}; if moving
     * it there fails, it is closed before the failure is thrown.
     */
    StreamCipher newCipher(AesKey key, long position) {
        StreamCipher cipher;
        try {
            cipher = KeyAccess.withBytes(key, bytes -> engine.newAesCtr(bytes, iv));
        } catch (GeneralSecurityException e) {
            // The key and IV were validated in build(); an engine failure here is not the caller's.
            throw new IllegalStateException("cannot create AES-CTR on " + engine.name() + ": " + e.getMessage(), e);
        }
        try {
            seek(cipher, position, new byte[16]);
        } catch (RuntimeException | Error e) {
            Closer.closeAfter(e, List.of(cipher));
            throw e;
        }
        return cipher;
    }

    /**
     * Moves {@code cipher} to stream position {@code position}: counter block IV + position / 16,
     * then position % 16 keystream bytes skipped. {@code scratch} is 16 bytes of the caller's.
     */
    void seek(StreamCipher cipher, long position, byte[] scratch) {
        CtrMath.counterBlock(iv, position >>> 4, scratch);
        cipher.reset(scratch);
        int skip = (int) (position & 15);
        if (skip > 0) {
            cipher.update(scratch, 0, skip, scratch, 0);
        }
    }

    /**
     * Zeroes this object's copy of the key; streams already open keep working (each has its own
     * copy), but new ones and {@link #withIv(byte[])} throw {@code IllegalStateException}. May
     * run while other threads make streams: each of those either gets the whole key or throws;
     * none ever encrypts under a zeroed or half-zeroed key.
     */
    @Override
    public void destroy() {
        key.destroy();
    }

    @Override
    public boolean isDestroyed() {
        return key.isDestroyed();
    }

    @Override
    public String toString() {
        return "CtrStreams(AES-" + key.length() * 8 + "-CTR on " + engine.name() + ", buffer " + bufferSize
                + ", stream offset " + streamOffset + ", parallelism " + parallelism + ")";
    }

    /** Collects and validates the parameters; {@link #build()} checks everything once. */
    public static final class Builder {
        private final BuilderKey key = new BuilderKey();
        private byte[] iv;
        private CryptoEngine engine;
        private int bufferSize = DEFAULT_BUFFER_SIZE;
        private long streamOffset;
        private boolean closeUnderlying = true;
        private int parallelism; // 0 until set: Parallelism.defaultParallelism() at build()
        private Executor executor;

        private Builder() {}

        /**
         * The key. The builder keeps a reference; each {@link #build()} copies it, so {@code key}
         * may be destroyed after building (destroying it before makes {@code build()} throw).
         *
         * @param key 16, 24 or 32 bytes (AES-128, -192 or -256)
         * @return this builder
         */
        public Builder key(AesKey key) {
            this.key.set(key);
            return this;
        }

        /**
         * The key of a {@link javax.crypto.SecretKey}: an AES key in RAW format, such as
         * {@link Keys#secretKey} gives from a keystore or {@link Keys#generate} makes. Its bytes
         * are copied as by {@link #key(byte[])} and the copy {@code getEncoded()} returned is
         * wiped.
         *
         * @param key an AES key of 16, 24 or 32 bytes (AES-128, -192 or -256)
         * @return this builder
         * @throws IllegalArgumentException if it is not a raw AES key of that length
         */
        public Builder key(javax.crypto.SecretKey key) {
            byte[] bytes = KeyAccess.rawAes(key);
            try {
                return key(bytes);
            } finally {
                java.util.Arrays.fill(bytes, (byte) 0);
            }
        }

        /**
         * The key bytes, copied once; the caller may wipe its array afterwards. The builder's
         * copy becomes the key of the first instance {@link #build()} makes, with no copy left
         * behind, and is zeroed by that instance's {@link CtrStreams#destroy()}. Later
         * {@code build()} calls copy it from there, so they throw once that instance was
         * destroyed: give the key again to build more.
         *
         * @param key 16, 24 or 32 bytes (AES-128, -192 or -256)
         * @return this builder
         * @throws IllegalArgumentException if {@code key} is not 16, 24 or 32 bytes
         */
        public Builder key(byte[] key) {
            this.key.copyOf(key);
            return this;
        }

        /**
         * The initial counter block, copied: random, and never used with this key for another
         * stream.
         *
         * @param iv 16 bytes
         * @return this builder
         * @throws IllegalArgumentException if {@code iv} is not 16 bytes
         */
        public Builder iv(byte[] iv) {
            Checks.length("iv", iv, 16);
            this.iv = iv.clone();
            return this;
        }

        /**
         * The engine to use (default {@link Engines#auto()}, resolved by {@link #build()}).
         *
         * @param engine an engine, or {@code null} for the default
         * @return this builder
         * @throws IllegalArgumentException if the engine has no AES-CTR (accp)
         */
        public Builder engine(CryptoEngine engine) {
            if (engine != null && !engine.kindFor(Operation.CTR).supports(Operation.CTR)) {
                throw new IllegalArgumentException(engine.kindFor(Operation.CTR).id() + " has no AES-CTR: give CtrStreams"
                        + " another engine (Engines.auto() takes CTR from one that has it)");
            }
            this.engine = engine;
            return this;
        }

        /**
         * The engine to use, by kind, looked up now with {@link Engines#get(EngineKind)}.
         *
         * @param kind the engine wanted
         * @return this builder
         * @throws io.sealpipe.engine.EngineUnavailableException if that engine cannot run here
         * @throws IllegalArgumentException if that engine has no AES-CTR (accp)
         */
        public Builder engine(EngineKind kind) {
            return engine(Engines.get(kind));
        }

        /**
         * Size of each stream's buffer (default 64 KiB). Small writes and reads are gathered in
         * it; large ones bypass it. It does not change the bytes written.
         *
         * @param bufferSize bytes, at least {@value CtrStreams#MIN_BUFFER_SIZE}
         * @return this builder
         * @throws IllegalArgumentException if {@code bufferSize} is smaller
         */
        public Builder bufferSize(int bufferSize) {
            if (bufferSize < MIN_BUFFER_SIZE) {
                throw new IllegalArgumentException(
                        "bufferSize must be at least " + MIN_BUFFER_SIZE + ", not " + bufferSize);
            }
            this.bufferSize = bufferSize;
            return this;
        }

        /**
         * Stream position of the first byte written or read (default 0), as Hadoop's
         * {@code streamOffset}: for appending to an existing stream, or for reading a part of it.
         * Need not be a multiple of 16.
         *
         * @param streamOffset the stream position, 0 or more
         * @return this builder
         * @throws IllegalArgumentException if {@code streamOffset} is negative
         */
        public Builder streamOffset(long streamOffset) {
            if (streamOffset < 0) {
                throw new IllegalArgumentException("streamOffset must be >= 0, not " + streamOffset);
            }
            this.streamOffset = streamOffset;
            return this;
        }

        /**
         * Whether closing a stream closes the wrapped stream or channel (default true). A stream
         * over a {@link PositionedInput} never closes what the input reads from.
         *
         * @param closeUnderlying false to leave the wrapped stream or channel open
         * @return this builder
         */
        public Builder closeUnderlying(boolean closeUnderlying) {
            this.closeUnderlying = closeUnderlying;
            return this;
        }

        /**
         * How many threads may encrypt or decrypt one large write or read (256 KiB or more): the
         * stream's own and, above 1, helpers on the {@link #executor(Executor) executor}, each on
         * its own counter range (default {@link Parallelism#defaultParallelism()}: 1, or the
         * system property {@value Parallelism#PROPERTY}). The bytes are the same whatever the
         * setting.
         *
         * @param parallelism 1 (this thread only) .. {@link Parallelism#MAX}
         * @return this builder
         * @throws IllegalArgumentException if not 1..{@link Parallelism#MAX}
         */
        public Builder parallelism(int parallelism) {
            this.parallelism = Checks.parallelism(parallelism);
            return this;
        }

        /**
         * Where helper tasks run when parallelism is above 1: the application's own threads
         * (default: sealpipe's shared daemon workers). Tasks never block; one stays with a
         * stream that is being written or read without pause for at most 64 rounds (about 64
         * MiB of GCM or CTR) and then returns to the executor. The stream's own thread does
         * whatever no task took, so an executor that is busy, or rejects tasks, slows the stream
         * down but never blocks it. The executor must run or reject every task: one that drops
         * tasks silently leaves the stream without help. Has no effect at parallelism 1.
         *
         * @param executor runs the helper tasks; not shut down by sealpipe
         * @return this builder
         */
        public Builder executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * Validates the settings and makes the instance, resolving the defaults: the engine
         * ({@link Engines#auto()}) and the parallelism.
         *
         * @return a thread-safe instance with its own copy of the key, ready to encrypt one stream
         * @throws IllegalStateException if the key or IV is missing, or the key was destroyed
         * @throws IllegalArgumentException if {@value Parallelism#PROPERTY} is not understood
         * @throws io.sealpipe.engine.EngineUnavailableException if no engine was given and none
         *     may be used
         */
        public CtrStreams build() {
            if (key.get() == null) {
                throw new IllegalStateException("a key is required: call key(...)");
            }
            if (iv == null) {
                throw new IllegalStateException("an IV is required: call iv(...)");
            }
            if (key.get().isDestroyed()) {
                throw new IllegalStateException("the key has been destroyed (a key given as bytes belongs to the first"
                        + " instance built, and is destroyed with it): call key(...) again");
            }
            if (parallelism == 0) {
                parallelism = Parallelism.defaultParallelism();
            }
            return new CtrStreams(this);
        }
    }

    static void zero(byte[] b) {
        Arrays.fill(b, (byte) 0);
    }
}
