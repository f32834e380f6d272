/**
 * sealpipe's stream API: {@link io.sealpipe.CtrStreams} makes Hadoop-compatible AES-CTR
 * {@link io.sealpipe.CryptoOutputStream}s and {@link io.sealpipe.CryptoInputStream}s (seekable,
 * positioned reads) over any stream or channel, on the engine that {@link
 * io.sealpipe.engine.Engines} selects; {@link io.sealpipe.AesKey} holds keys.
 */
package io.sealpipe;
