/**
 * Authenticated AES-GCM streams in the c2sp.org/chunked-encryption format (docs/FORMAT.md):
 * 16 KiB chunks, each sealed with its own tag, behind a salt and a key commitment, so that no
 * reader returns a byte before its chunk is authenticated and a cut message never verifies.
 *
 * <p>The API is six classes. {@link io.sealpipe.gcm.GcmStreams} is the factory: a key (and an
 * optional context) in its {@link io.sealpipe.gcm.GcmStreams.Builder}, the format's sizes
 * ({@link io.sealpipe.gcm.GcmStreams#HEADER_LENGTH}, {@link
 * io.sealpipe.gcm.GcmStreams#ciphertextLength}, {@link io.sealpipe.gcm.GcmStreams#plaintextLength}),
 * and the streams. {@link io.sealpipe.gcm.GcmOutputStream} writes one message (and must be
 * closed to finish it, or aborted); {@link io.sealpipe.gcm.GcmInputStream} reads one from the
 * start; {@link io.sealpipe.gcm.GcmSeekableChannel} reads one at any position, from a file, a
 * buffer or a {@link io.sealpipe.PositionedInput}; for callers that fetch the ciphertext
 * themselves (a Hadoop vectored read), it also says where each chunk lies ({@link
 * io.sealpipe.gcm.GcmSeekableChannel#sealedOffset}, {@link
 * io.sealpipe.gcm.GcmSeekableChannel#sealedLength}) and opens one chunk at a time ({@link
 * io.sealpipe.gcm.GcmSeekableChannel#openChunk}). {@link io.sealpipe.gcm.GcmSealer} and {@link
 * io.sealpipe.gcm.GcmOpener} write and read one message from and into buffers the caller hands
 * over, for adapters such as a Commons Crypto cipher. A failed check is a {@link
 * io.sealpipe.StreamAuthenticationException} that names the chunk.
 *
 * <p>Everything else here (the key schedule, the parallel writer, the jobs the workers run) is
 * package-private.
 *
 * <p>{@code GcmStreams} is immutable and thread-safe, built once and validated in {@code build()};
 * the streams it makes are for one thread at a time, except the positioned reads of a {@code
 * GcmSeekableChannel}. Failures reach the caller as {@code IOException}s at the stream boundary.
 */
package io.sealpipe.gcm;
