/**
 * What sealpipe's formats share: keys ({@link io.sealpipe.AesKey}, read from key stores by
 * {@link io.sealpipe.Keys}), the threads a stream may use ({@link io.sealpipe.Parallelism}; by
 * default the caller's only), sources read at positions ({@link io.sealpipe.PositionedInput}),
 * sinks that can be abandoned ({@link io.sealpipe.Abortable}), and the failure of an
 * authenticated stream ({@link io.sealpipe.StreamAuthenticationException}, which names the
 * chunk).
 *
 * <p>One package per format: {@link io.sealpipe.gcm} (authenticated AES-GCM streams in the
 * c2sp.org/chunked-encryption format, streaming and random access), {@link io.sealpipe.ctr}
 * (Hadoop-compatible AES-CTR streams: seekable, positioned reads, confidentiality only) and
 * {@link io.sealpipe.snappy} (Snappy compression before either). All run on the engine that
 * {@link io.sealpipe.engine.Engines} selects. {@link io.sealpipe.hadoop} has the sealed Hadoop
 * {@code FileSystem} and codec; {@code io.sealpipe.internal} is not an API (nor exported by the module).
 */
package io.sealpipe;
