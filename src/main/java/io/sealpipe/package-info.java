/**
 * sealpipe's stream API. {@link io.sealpipe.GcmStreams} makes authenticated AES-GCM streams in
 * the c2sp.org/chunked-encryption format (streaming and random access); {@link
 * io.sealpipe.CtrStreams} makes Hadoop-compatible AES-CTR {@link io.sealpipe.CryptoOutputStream}s
 * and {@link io.sealpipe.CryptoInputStream}s (seekable, positioned reads; confidentiality only,
 * no integrity); {@link io.sealpipe.SnappyStreams} compresses in the Snappy framing format before
 * either encrypts. All run on the engine that {@link io.sealpipe.engine.Engines} selects and can
 * share one stream's work among threads ({@link io.sealpipe.Parallelism}; by default they use
 * the caller's thread only); {@link io.sealpipe.AesKey} holds keys.
 *
 * <p>The factories ({@code GcmStreams}, {@code CtrStreams}, {@code SnappyStreams}) are immutable
 * and thread-safe, built once and validated in {@code build()}; the streams they make are for one
 * thread at a time, except the positioned reads. Failures reach the caller as {@code IOException}s
 * at the stream boundary; a failed authentication is a {@link
 * io.sealpipe.StreamAuthenticationException} that names the chunk.
 */
package io.sealpipe;
