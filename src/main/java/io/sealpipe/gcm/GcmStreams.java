package io.sealpipe.gcm;

import io.sealpipe.AesKey;
import io.sealpipe.Keys;
import io.sealpipe.Parallelism;
import io.sealpipe.PositionedInput;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Engines;
import io.sealpipe.internal.BuilderKey;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.CiphertextSink;
import io.sealpipe.internal.CiphertextSource;
import io.sealpipe.internal.Closer;
import io.sealpipe.internal.KeyAccess;
import io.sealpipe.internal.Workers;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import javax.security.auth.Destroyable;

/**
 * Authenticated streams in the standard chunked AES-GCM format of c2sp.org/chunked-encryption
 * with SHA-512: Cobblestone-256 for a 32-byte key, Cobblestone-128 for a 16-byte key
 * (docs/FORMAT.md). Any other implementation of that specification reads what these streams
 * write, and the other way round.
 *
 * <p>What is protected: each message gets its own key and nonce, derived from the input key,
 * a random 24-byte salt chosen here and the optional {@code context} (for example a file path
 * or a shuffle block id, bound into the derivation and not stored). The plaintext is split into
 * 16 KiB chunks, each sealed with AES-GCM, and the final chunk is always shorter than 16 KiB. A
 * reader therefore detects any modified, reordered, duplicated, dropped, truncated or extended
 * ciphertext, a wrong key and a wrong context, and it releases plaintext only after the chunk
 * holding it was authenticated. What is not hidden: the plaintext length (ciphertext = plaintext
 * + 56 + 16 per chunk).
 *
 * <p>Use an input key chosen uniformly at random (or from a KDF), never a password. One input
 * key can encrypt about 2^45 messages of up to 1 GiB each (see the specification's table).
 *
 * <p>An instance is immutable and thread-safe and holds a copy of the key until
 * {@link #destroy()}; each stream it makes is for one thread at a time, except the positioned
 * reads of {@link GcmSeekableChannel}. A stream keeps what it needs from the moment it is made,
 * so destroying the instance never breaks an open stream. None keeps the input key past its
 * header: an encrypting stream keeps the message key in its cipher (and, at parallelism above 1,
 * a copy until its helpers' ciphers are made); a channel keeps a copy of the message key until
 * it is closed, for the ciphers of its positioned reads; a decrypting stream keeps a copy of the
 * input key until its first read has checked the header (or until it is closed), then the
 * message key as an encrypting stream does.
 *
 * <pre>{@code
 * GcmStreams gcm = GcmStreams.builder().key(key32).context(blockId).build();
 * try (OutputStream out = gcm.encrypt(Files.newOutputStream(path))) {
 *     out.write(data);
 * }                                          // close() writes the final chunk: do not skip it
 * try (InputStream in = gcm.decrypt(Files.newInputStream(path))) {
 *     in.transferTo(sink);                   // StreamAuthenticationException if tampered
 * }
 * try (GcmSeekableChannel ch = gcm.open(FileChannel.open(path))) {
 *     ch.read(buffer, 1L << 30);             // decrypts and verifies only the chunks it touches
 * }
 * }</pre>
 */
public final class GcmStreams implements Destroyable {
    /** Bytes of a message's header: its 24-byte salt and 32-byte key commitment. */
    public static final int HEADER_LENGTH = Cobblestone.HEADER_LENGTH;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final AesKey key;
    private final byte[] context;
    private final CryptoEngine engine;
    private final boolean closeUnderlying;
    private final int parallelism;
    private final Executor executor;
    private final Consumer<byte[]> saltSource;

    private GcmStreams(Builder b) {
        this.context = b.context.clone();
        this.engine = b.engine != null ? b.engine : Engines.auto();
        this.closeUnderlying = b.closeUnderlying;
        this.parallelism = b.parallelism;
        this.executor = b.executor != null ? b.executor : Workers.shared();
        this.saltSource = b.saltSource;
        this.key = b.key.forInstance(); // last: nothing after it can fail and strand the key
    }

    /**
     * Starts a builder. Only the key is required; the defaults are no context, the engine of
     * {@link Engines#auto()}, {@code closeUnderlying(true)} and parallelism 1 (or
     * {@value Parallelism#PROPERTY}).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Encrypts what is written to the returned stream into {@code out}, as a new message with a
     * fresh random salt; close it to finish the message.
     *
     * @param out receives the ciphertext, from the header on
     * @return the encrypting stream, for one thread at a time
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public GcmOutputStream encrypt(OutputStream out) {
        Objects.requireNonNull(out, "out");
        return new GcmOutputStream(CiphertextSink.of(out), this);
    }

    /**
     * Encrypts what is written to the returned stream (or channel) into {@code out}, as a new
     * message; close it to finish the message.
     *
     * @param out receives the ciphertext, from the header on
     * @return the encrypting stream, for one thread at a time
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public GcmOutputStream encrypt(WritableByteChannel out) {
        Objects.requireNonNull(out, "out");
        return new GcmOutputStream(CiphertextSink.of(out), this);
    }

    /**
     * Encrypts a new message (with a fresh random salt) from buffers the caller hands over, into
     * buffers it hands over: for adapters such as a Commons Crypto cipher. The bytes are those
     * of {@link #encrypt(OutputStream)}; parallelism does not apply.
     *
     * @return the sealer, for one thread at a time; {@link GcmSealer#finish} ends the message
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public GcmSealer sealer() {
        return new GcmSealer(this);
    }

    /**
     * Decrypts and verifies one message from buffers the caller hands over, into buffers it
     * hands over, holding back the last authenticated chunk until the input ends (see {@link
     * GcmOpener}).
     *
     * @return the opener, for one thread at a time
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public GcmOpener opener() {
        return new GcmOpener(this);
    }

    /**
     * Decrypts and verifies {@code in} as it is read, from its current position to its end.
     * Nothing is read until the first read; a wrong key or context fails there.
     *
     * @param in the ciphertext, one whole message to its end
     * @return the decrypting stream, for one thread at a time
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public GcmInputStream decrypt(InputStream in) {
        Objects.requireNonNull(in, "in");
        return new GcmInputStream(CiphertextSource.of(in), this);
    }

    /**
     * Decrypts and verifies {@code in} as it is read, from its current position to its end.
     * Nothing is read until the first read; a wrong key or context fails there. Over a {@link
     * SeekableByteChannel} the stream keeps its own position and reads the channel at explicit
     * positions, leaving the channel's position where it was.
     *
     * @param in the ciphertext, one whole message to its end
     * @return the decrypting stream (also a channel), for one thread at a time
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public GcmInputStream decrypt(ReadableByteChannel in) {
        Objects.requireNonNull(in, "in");
        return new GcmInputStream(CiphertextSource.of(in), this);
    }

    /**
     * Decrypts and verifies the message held in memory between {@code in}'s position and its
     * limit (a {@code FileChannel.map} region, a received block): chunks are opened straight
     * from the buffer into the reader's array, with no copy in between. {@code in}'s own
     * position and limit are left alone; its content must not change until the stream is
     * closed (at parallelism above 1, workers open the batch after a short read's between reads).
     *
     * <p><b>A mapped file must not shrink before the stream is closed.</b> The pages of a mapping past the
     * file's new end fault when touched (SIGBUS), and the engines read the buffer without a
     * check. A fault in native code <b>kills the JVM</b>: {@code openssl-jni} always reads the
     * buffer there, {@code openssl-jna} may; a fault in Java code ({@code jce}) is thrown as
     * {@link InternalError}. Neither is an {@code IOException} to handle.
     * If another process may truncate the file, read it with {@link #decrypt(ReadableByteChannel)}
     * or {@link #open} over its {@code FileChannel} instead, where a cut is an authentication
     * failure ({@link StreamAuthenticationException}), at the cost of one copy.
     *
     * @param in one whole message, heap or direct
     * @return the decrypting stream, for one thread at a time
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public GcmInputStream decrypt(ByteBuffer in) {
        Objects.requireNonNull(in, "in");
        return new GcmInputStream(in, this);
    }

    /**
     * Random access to the message in {@code in}, which starts at the channel's current
     * position and runs to its end: reads decrypt and verify only the chunks they touch. Reads
     * the header and checks the key commitment now.
     *
     * @param in holds one whole message from its position to its end; must not change while the
     *     returned channel is open
     * @return a read-only channel over the plaintext, with thread-safe positioned reads
     * @throws StreamAuthenticationException if the header is truncated or the commitment does
     *     not match (wrong key or context, or a modified header)
     * @throws IOException if reading the channel fails (with {@code closeUnderlying}, the default,
     *     {@code in} is closed when this throws)
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public GcmSeekableChannel open(SeekableByteChannel in) throws IOException {
        Objects.requireNonNull(in, "in");
        try {
            return new GcmSeekableChannel(GcmSeekableChannel.Source.of(in, closeUnderlying), in.size() - in.position(),
                    GcmSeekableChannel.DEFAULT_CACHED_CHUNKS, this);
        } catch (IOException | RuntimeException e) {
            if (closeUnderlying) { // the caller never gets a channel to close
                try {
                    in.close();
                } catch (IOException closing) {
                    e.addSuppressed(closing);
                }
            }
            throw e;
        }
    }

    /**
     * Random access to the message of {@code length} bytes at positions {@code 0..length-1} of
     * {@code in} (a Hadoop {@code FSDataInputStream}, whose length its {@code FileStatus} gives):
     * as {@link #open(SeekableByteChannel)}. Positioned reads of the channel use
     * {@link PositionedInput#read}, its own position-moving reads
     * {@link PositionedInput#readSequentially}. Nothing is closed with the channel: the caller
     * closes what {@code in} reads from, after the channel.
     *
     * <pre>{@code
     * try (FSDataInputStream file = fs.open(path);
     *         GcmSeekableChannel ch = gcm.open(file::read, fs.getFileStatus(path).getLen(), 8)) {
     *     ch.readFully(offset, block, 0, block.length);
     * }
     * }</pre>
     *
     * @param in the ciphertext, read by position from several threads at once
     * @param length the ciphertext's length in bytes, the whole message; a length no message has
     *     makes {@link GcmSeekableChannel#size()} and reads at the end fail as truncated or
     *     extended
     * @param cachedChunks how many decrypted 16 KiB chunks to keep between reads, 0 to
     *     {@link GcmSeekableChannel#MAX_CACHED_CHUNKS} (default
     *     {@value GcmSeekableChannel#DEFAULT_CACHED_CHUNKS})
     * @return a read-only channel over the plaintext, with thread-safe positioned reads
     * @throws StreamAuthenticationException if the header is truncated or the commitment does
     *     not match (wrong key or context, or a modified header)
     * @throws IOException if reading {@code in} fails
     * @throws IllegalArgumentException if {@code length} is negative or {@code cachedChunks} out
     *     of range
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public GcmSeekableChannel open(PositionedInput in, long length, int cachedChunks) throws IOException {
        Objects.requireNonNull(in, "in");
        return new GcmSeekableChannel(GcmSeekableChannel.Source.of(in), length, cachedChunks, this);
    }

    /**
     * Whether a message that begins with {@code header} was written under this instance's key
     * and context: its key commitment matches (compared in constant time). With several
     * candidate keys (the versions of a rotated key), the one that matches is the one to open
     * the message with; no chunk needs to be decrypted to find it.
     *
     * @param header the message's first {@value #HEADER_LENGTH} bytes (salt and key
     *     commitment), or more
     * @return true if the commitment matches
     * @throws IllegalArgumentException if {@code header} is shorter than {@value #HEADER_LENGTH}
     *     bytes
     * @throws IllegalStateException if this instance was {@link #destroy() destroyed}
     */
    public boolean matchesHeader(byte[] header) {
        Objects.requireNonNull(header, "header");
        if (header.length < HEADER_LENGTH) {
            throw new IllegalArgumentException("header must be at least " + HEADER_LENGTH + " bytes, not " + header.length);
        }
        Cobblestone.MessageKeys keys = derive(Arrays.copyOf(header, Cobblestone.SALT_LENGTH));
        try {
            return keys.commitmentMatches(header, Cobblestone.SALT_LENGTH);
        } finally {
            keys.destroy();
        }
    }

    /**
     * The plaintext length that a message of {@code ciphertextLength} bytes holds, from the
     * length alone: {@code ciphertextLength - 56 - 16 * chunks}, where the message has
     * {@code (ciphertextLength - 56) / 16400 + 1} chunks. Lengths that no message has give -1:
     * under 72 bytes (header and one empty chunk), or a remainder
     * {@code (ciphertextLength - 56) % 16400} under 16 (no room for the final chunk's tag). The
     * length is not authenticated until the final chunk is ({@link GcmSeekableChannel#size()}).
     *
     * @param ciphertextLength the stored length in bytes
     * @return the plaintext length, or -1 if no message is {@code ciphertextLength} bytes long
     */
    public static long plaintextLength(long ciphertextLength) {
        return Cobblestone.plaintextLength(ciphertextLength);
    }

    /**
     * The ciphertext length of a message holding {@code plaintextLength} bytes:
     * {@code 56 + plaintextLength + 16 * (plaintextLength / 16384 + 1)}.
     *
     * @param plaintextLength bytes of plaintext, 0 or more
     * @return the message's length in bytes
     * @throws IllegalArgumentException if {@code plaintextLength} is negative or beyond the
     *     format's limit (2^38 chunks)
     */
    public static long ciphertextLength(long plaintextLength) {
        if (plaintextLength < 0 || plaintextLength / Cobblestone.CHUNK_SIZE >= Cobblestone.MAX_CHUNKS) {
            throw new IllegalArgumentException("plaintext length must be 0.." + (Cobblestone.MAX_CHUNKS * Cobblestone.CHUNK_SIZE - 1)
                    + ", not " + plaintextLength);
        }
        return Cobblestone.HEADER_LENGTH + plaintextLength + Cobblestone.TAG_LENGTH * (plaintextLength / Cobblestone.CHUNK_SIZE + 1);
    }

    /**
     * The engine the streams run on.
     *
     * @return the builder's engine, or the one {@link Engines#auto()} chose at build time
     */
    public CryptoEngine engine() {
        return engine;
    }

    /**
     * The format's name for this key size.
     *
     * @return {@code "Cobblestone-128"} for a 16-byte key, {@code "Cobblestone-256"} for 32
     */
    public String formatName() {
        return key.length() == 16 ? "Cobblestone-128" : "Cobblestone-256";
    }

    boolean closeUnderlying() {
        return closeUnderlying;
    }

    /**
     * How many threads (the stream's own and helpers) may seal or open one stream's chunks.
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
     * {@code count} more ciphers keyed with a message key, for workers; if one cannot be made,
     * those made are closed and the failure is thrown.
     *
     * @throws IllegalStateException if {@code messageKey} was destroyed (the stream was closed
     *     from another thread)
     */
    List<AeadCipher> newCiphers(AesKey messageKey, int count) {
        return KeyAccess.withBytes(messageKey, bytes -> newCiphers(bytes, count));
    }

    private List<AeadCipher> newCiphers(byte[] messageKey, int count) {
        List<AeadCipher> ciphers = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                ciphers.add(newCipher(messageKey));
            }
        } catch (RuntimeException | Error e) { // an OutOfMemoryError too: close what was made
            Closer.closeAfter(e, ciphers);
            throw e;
        }
        return ciphers;
    }

    /** A fresh random salt (or, in tests, the injected one). */
    byte[] newSalt() {
        byte[] salt = new byte[Cobblestone.SALT_LENGTH];
        saltSource.accept(salt);
        return salt;
    }

    /** The per-message key, base nonce and commitment for {@code salt}. */
    Cobblestone.MessageKeys derive(byte[] salt) {
        return derive(key, salt);
    }

    /** The same with {@code inputKey}: a stream's own copy of this instance's key. */
    Cobblestone.MessageKeys derive(AesKey inputKey, byte[] salt) {
        return KeyAccess.withBytes(inputKey, bytes -> Cobblestone.derive(bytes, salt, context));
    }

    /**
     * A copy of the key for a stream that derives its message key later, and destroys the copy
     * then (or when it closes).
     *
     * @throws IllegalStateException if this instance was destroyed
     */
    AesKey keyCopy() {
        return KeyAccess.copy(key);
    }

    /** A GCM cipher keyed with a message key. */
    AeadCipher newCipher(byte[] messageKey) {
        try {
            return engine.newAesGcm(messageKey);
        } catch (GeneralSecurityException e) {
            // The key length was validated in build(); an engine failure here is not the caller's.
            throw new IllegalStateException("cannot create AES-GCM on " + engine.name() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Zeroes this object's copy of the key. Streams and channels already made keep working (each
     * holds its own copy of what it needs, see the class comment); making new ones throws
     * {@code IllegalStateException}. May run while other threads make streams: each of those
     * either gets the whole key (and its message is sealed under it) or throws, before writing
     * anything; none ever uses a zeroed or half-zeroed key.
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
        return "GcmStreams(" + formatName() + " on " + engine.name() + ", context " + context.length + " bytes, parallelism "
                + parallelism + ")";
    }

    /** Collects and validates the parameters; {@link #build()} checks everything once. */
    public static final class Builder {
        private final BuilderKey key = new BuilderKey();
        private byte[] context = new byte[0];
        private CryptoEngine engine;
        private boolean closeUnderlying = true;
        private int parallelism; // 0 until set: Parallelism.defaultParallelism() at build()
        private Executor executor;
        private Consumer<byte[]> saltSource = RANDOM::nextBytes;

        private Builder() {}

        /**
         * The input key: 32 bytes (Cobblestone-256) or 16 bytes (Cobblestone-128). The builder
         * keeps a reference; each {@link #build()} copies it, so {@code key} may be destroyed
         * after building (destroying it before makes {@code build()} throw).
         *
         * @param key the input key, checked by {@link #build()}
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
         * @param key an AES key of 32 bytes (Cobblestone-256) or 16 bytes (Cobblestone-128)
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
         * The input key bytes, copied once; the caller may wipe its array afterwards. The
         * builder's copy becomes the key of the first instance {@link #build()} makes, with no
         * copy left behind, and is zeroed by that instance's {@link GcmStreams#destroy()}. Later
         * {@code build()} calls copy it from there, so they throw once that instance was
         * destroyed: give the key again to build more.
         *
         * @param key 32 bytes (Cobblestone-256) or 16 bytes (Cobblestone-128)
         * @return this builder
         * @throws IllegalArgumentException if {@code key} is not 16 or 32 bytes
         */
        public Builder key(byte[] key) {
            Objects.requireNonNull(key, "key");
            if (key.length != 16 && key.length != 32) {
                throw new IllegalArgumentException("key must be 16 or 32 bytes, not " + key.length);
            }
            this.key.copyOf(key);
            return this;
        }

        /**
         * Bytes bound into the key derivation (default empty), copied: a reader must give the
         * same context, or the commitment check rejects the message. Not stored in the ciphertext.
         *
         * @param context any bytes, for example a file path or block id in UTF-8
         * @return this builder
         */
        public Builder context(byte[] context) {
            this.context = Objects.requireNonNull(context, "context").clone();
            return this;
        }

        /**
         * The engine to use (default {@link Engines#auto()}, resolved by {@link #build()}).
         *
         * @param engine an engine, or {@code null} for the default
         * @return this builder
         */
        public Builder engine(CryptoEngine engine) {
            this.engine = engine;
            return this;
        }

        /**
         * The engine to use, by kind, looked up now with {@link Engines#get(EngineKind)}.
         *
         * @param kind the engine wanted
         * @return this builder
         * @throws io.sealpipe.engine.EngineUnavailableException if that engine cannot run here
         */
        public Builder engine(EngineKind kind) {
            this.engine = Engines.get(kind);
            return this;
        }

        /**
         * Whether closing a stream closes the wrapped stream or channel (default true).
         *
         * @param closeUnderlying false to leave the wrapped stream or channel open
         * @return this builder
         */
        public Builder closeUnderlying(boolean closeUnderlying) {
            this.closeUnderlying = closeUnderlying;
            return this;
        }

        /**
         * How many threads may seal or open the chunks of one stream: the stream's own and, above
         * 1, helpers on the {@link #executor(Executor) executor} (default {@link
         * Parallelism#defaultParallelism()}: 1, or the system property {@value
         * Parallelism#PROPERTY}). A stream works alone until its first MiB, so short messages
         * never wait for a thread. The bytes written are the same whatever the setting, and so
         * are the bytes read. Above 1, a decrypting stream reads the next batch (up to 1008 KiB) of
         * ciphertext from the wrapped stream while the workers open the current one; it reads
         * the wrapped stream on the calling thread only (see {@link GcmInputStream}).
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
         * Tests only: a fixed salt, so that encryption reproduces known ciphertexts. Reusing a
         * salt with one key and context reuses the message key and nonces: never in production.
         */
        Builder fixedSaltForTests(byte[] salt) {
            if (salt.length != Cobblestone.SALT_LENGTH) {
                throw new IllegalArgumentException("salt must be " + Cobblestone.SALT_LENGTH + " bytes, not " + salt.length);
            }
            byte[] copy = salt.clone();
            this.saltSource = out -> System.arraycopy(copy, 0, out, 0, copy.length);
            return this;
        }

        /**
         * Validates the settings and makes the instance, resolving the defaults: the engine
         * ({@link Engines#auto()}) and the parallelism.
         *
         * @return an immutable, thread-safe instance with its own copy of the key
         * @throws IllegalStateException if the key is missing or destroyed
         * @throws IllegalArgumentException if the key is not 16 or 32 bytes, or
         *     {@value Parallelism#PROPERTY} is not understood
         * @throws io.sealpipe.engine.EngineUnavailableException if no engine was given and none
         *     may be used
         */
        public GcmStreams build() {
            if (key.get() == null) {
                throw new IllegalStateException("key is required (32 bytes for Cobblestone-256, 16 for Cobblestone-128)");
            }
            if (key.get().isDestroyed()) {
                throw new IllegalStateException("key has been destroyed (a key given as bytes belongs to the first"
                        + " instance built, and is destroyed with it): give key(...) again");
            }
            if (key.get().length() != 16 && key.get().length() != 32) {
                throw new IllegalArgumentException("key must be 16 or 32 bytes, not " + key.get().length());
            }
            if (parallelism == 0) {
                parallelism = Parallelism.defaultParallelism();
            }
            return new GcmStreams(this);
        }
    }
}
