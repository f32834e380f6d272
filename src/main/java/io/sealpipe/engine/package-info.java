/**
 * The engine layer: AES-CTR, AES-GCM, AES-CFB128 and HMAC-SHA256 from one of three
 * implementations behind the {@link io.sealpipe.engine.CryptoEngine} interface.
 *
 * <p>{@link io.sealpipe.engine.Engines} picks the engine ({@code auto}: OpenSSL through JNI, else
 * OpenSSL through JNA, when the CPU has AES-NI; JCE otherwise), honours the
 * {@link io.sealpipe.engine.EngineSettings} system properties, and explains its choice in an
 * {@link io.sealpipe.engine.EngineReport}. The implementations live in the {@code openssl},
 * {@code jna} and {@code jce} subpackages.
 */
package io.sealpipe.engine;
