/**
 * The engine layer: AES-CTR, AES-GCM, AES-CFB128 and HMAC-SHA256 from one of three
 * implementations behind the {@link io.sealpipe.engine.CryptoEngine} interface.
 *
 * <p>{@link io.sealpipe.engine.Engines} picks the engine ({@code auto}: OpenSSL through JNI, else
 * OpenSSL through JNA, when the CPU has hardware AES (AES-NI on x86-64, ARMv8 AES on aarch64);
 * JCE otherwise), honours the
 * {@link io.sealpipe.engine.EngineSettings} system properties, and explains its choice in an
 * {@link io.sealpipe.engine.EngineReport}; a configuration that allows no engine is an
 * {@link io.sealpipe.engine.EngineUnavailableException}, never a silent fallback. The
 * implementations live in the {@code openssl}, {@code jna} and {@code jce} subpackages.
 *
 * <p>Engines are stateless and thread-safe. The ciphers and MACs they make are not: use one per
 * thread and close it, which frees its context and key schedule.
 */
package io.sealpipe.engine;
