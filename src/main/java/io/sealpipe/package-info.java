/**
 * sealpipe's stream API. {@link io.sealpipe.GcmStreams} makes authenticated AES-GCM streams in
 * the c2sp.org/chunked-encryption format (streaming and random access); {@link
 * io.sealpipe.CtrStreams} makes Hadoop-compatible AES-CTR {@link io.sealpipe.CryptoOutputStream}s
 * and {@link io.sealpipe.CryptoInputStream}s (seekable, positioned reads); {@link
 * io.sealpipe.SnappyStreams} compresses in the Snappy framing format before either encrypts. All
 * run on the engine that {@link io.sealpipe.engine.Engines} selects and can share one stream's
 * work among threads ({@link io.sealpipe.Parallelism}); {@link io.sealpipe.AesKey} holds keys.
 */
package io.sealpipe;
