/**
 * Compress, then encrypt: the standard Snappy framing format (x-snappy-framed, each frame with the
 * masked CRC-32C of its data) over any stream, typically a {@link
 * io.sealpipe.gcm.GcmOutputStream} or a {@link io.sealpipe.ctr.CryptoOutputStream}. Needs the
 * optional dependency {@code org.xerial.snappy:snappy-java}; without it, building a {@link
 * io.sealpipe.snappy.SnappyStreams} says so.
 *
 * <p>The API is three classes. {@link io.sealpipe.snappy.SnappyStreams} is the factory
 * (parallelism and executor in its {@link io.sealpipe.snappy.SnappyStreams.Builder}); {@link
 * io.sealpipe.snappy.FramedSnappyOutputStream} compresses, frames in parallel when asked; {@link
 * io.sealpipe.snappy.FramedSnappyInputStream} decompresses and checks each frame's CRC.
 *
 * <p>{@code SnappyStreams} is immutable and thread-safe, built once and validated in {@code
 * build()}; the streams it makes are for one thread at a time. Failures reach the caller as {@code
 * IOException}s at the stream boundary.
 */
package io.sealpipe.snappy;
