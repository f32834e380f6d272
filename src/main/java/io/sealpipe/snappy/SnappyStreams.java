package io.sealpipe.snappy;

import io.sealpipe.Parallelism;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.OptionalDependency;
import io.sealpipe.internal.Workers;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * Compression for the compress-then-encrypt pipeline: streams in the standard Snappy framing
 * format (x-snappy-framed: a stream identifier, then frames of at most 64 KiB of data, each
 * with the masked CRC-32C of its data), so that after decryption any framed-Snappy reader
 * (snappy-java's {@code SnappyFramedInputStream}, python-snappy, Go's snappy) decodes it, and
 * what they write is read here. Frames that would not shrink are stored uncompressed.
 *
 * <p>The compressing stream goes over an encrypting one, the decompressing stream over a
 * decrypting one; none of the layers knows the others:
 *
 * <pre>{@code
 * GcmStreams gcm = GcmStreams.builder().key(key).build();
 * SnappyStreams snappy = SnappyStreams.builder().build();
 * try (OutputStream out = snappy.compress(gcm.encrypt(Files.newOutputStream(path)))) {
 *     out.write(data);
 * }
 * try (InputStream in = snappy.decompress(gcm.decrypt(Files.newInputStream(path)))) {
 *     in.transferTo(sink);
 * }
 * }</pre>
 *
 * <p><b>Compression reveals the compressed length.</b> An attacker who can put data of their
 * choosing into a stream beside a secret, and see how long the ciphertext is, can learn the
 * secret piece by piece (the CRIME and BREACH attacks). Do not compress secrets together with
 * attacker-chosen data in one stream.
 *
 * <p>With {@link Builder#parallelism parallelism} above 1, frames are compressed (or
 * decompressed) by helper threads while this thread passes the previous frames on to the next
 * layer, so compression and encryption run at once; the bytes are the same whatever the setting.
 * An instance is immutable and thread-safe; each stream it makes is for one thread at a time.
 *
 * <p>Needs snappy-java ({@code org.xerial.snappy:snappy-java}), an optional dependency of
 * sealpipe: without it {@link Builder#build()} throws {@link IllegalStateException} saying so.
 */
public final class SnappyStreams {
    private final int parallelism;
    private final Executor executor;
    private final boolean closeUnderlying;

    private SnappyStreams(Builder b) {
        this.parallelism = b.parallelism;
        this.executor = b.executor != null ? b.executor : Workers.shared();
        this.closeUnderlying = b.closeUnderlying;
    }

    /**
     * Starts a builder. The defaults are parallelism 1 (or {@value Parallelism#PROPERTY}),
     * sealpipe's shared workers and {@code closeUnderlying(true)}.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Compresses what is written to the returned stream into {@code out}; close it to finish.
     *
     * @param out receives the framed stream, typically an encrypting stream
     * @return the compressing stream, for one thread at a time
     */
    public FramedSnappyOutputStream compress(OutputStream out) {
        Objects.requireNonNull(out, "out");
        return new FramedSnappyOutputStream(out, this);
    }

    /**
     * Decompresses {@code in} as it is read, checking every frame's CRC.
     *
     * @param in a Snappy framed stream, typically a decrypting stream
     * @return the decompressing stream, for one thread at a time
     */
    public FramedSnappyInputStream decompress(InputStream in) {
        Objects.requireNonNull(in, "in");
        return new FramedSnappyInputStream(in, this);
    }

    /**
     * How many threads (the stream's own and helpers) may compress or decompress one stream's
     * frames.
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

    boolean closeUnderlying() {
        return closeUnderlying;
    }

    @Override
    public String toString() {
        return "SnappyStreams(parallelism " + parallelism + ")";
    }

    /** Collects the settings. */
    public static final class Builder {
        private int parallelism; // 0 until set: Parallelism.defaultParallelism() at build()
        private Executor executor;
        private boolean closeUnderlying = true;

        private Builder() {}

        /**
         * How many threads may compress or decompress the frames of one stream: the stream's own
         * and, above 1, helpers on the {@link #executor(Executor) executor} (default {@link
         * Parallelism#defaultParallelism()}: 1, or the system property {@value
         * Parallelism#PROPERTY}).
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
         * Whether closing a stream closes the wrapped stream (default true).
         *
         * @param closeUnderlying false to leave the wrapped stream open
         * @return this builder
         */
        public Builder closeUnderlying(boolean closeUnderlying) {
            this.closeUnderlying = closeUnderlying;
            return this;
        }

        /**
         * Makes the instance.
         *
         * @return an immutable, thread-safe instance
         * @throws IllegalArgumentException if {@value Parallelism#PROPERTY} is not understood
         * @throws IllegalStateException if snappy-java (an optional dependency) is not on the class
         *     path, naming the Maven coordinates to add; checked here, before any stream is opened
         */
        public SnappyStreams build() {
            if (!OptionalDependency.SNAPPY.isPresent()) {
                throw new IllegalStateException("SnappyStreams is unavailable: " + OptionalDependency.SNAPPY.absence());
            }
            if (parallelism == 0) {
                parallelism = Parallelism.defaultParallelism();
            }
            return new SnappyStreams(this);
        }
    }
}
