/**
 * JMH benchmarks of the engine layer ({@link io.sealpipe.engine}) and the CTR streams
 * ({@link io.sealpipe.ctr.CtrStreams}), run by {@code mvn -Pjmh verify}
 * (see docs/PERFORMANCE.md), and {@link io.sealpipe.bench.JmhToMbps}, which turns JMH's JSON
 * results into a table of MB/s.
 *
 * <ul>
 *   <li>{@link io.sealpipe.bench.EngineBenchmark}: every engine, message size and operation
 *       (CTR, GCM seal/open, CFB, HMAC-SHA256, CFB then HMAC) on heap arrays.
 *   <li>{@link io.sealpipe.bench.JceWarmupBenchmark}: the jce engine, which slices large calls,
 *       against plain SunJCE {@code Cipher} calls on the whole buffer, after a short warm-up.
 *   <li>{@link io.sealpipe.bench.CtrStreamBenchmark}: sealpipe's CTR streams on each engine
 *       against Commons Crypto's CTR streams (JCE, and OpenSSL through the benchmark-only shim in
 *       {@code src/jmh/native}) and a plain SunJCE {@code Cipher} loop, writing and reading.
 * </ul>
 *
 * <p>Every benchmark runs in {@code Mode.Throughput} with one operation per message of
 * {@code size} bytes (plaintext bytes, for GCM open too; one application write or read for the
 * streams), so MB/s = ops/s &times; size / 10<sup>6</sup>.
 * Not part of the library: compiled only as test sources of the {@code jmh} profile.
 */
package io.sealpipe.bench;
