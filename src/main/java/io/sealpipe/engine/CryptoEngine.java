package io.sealpipe.engine;

import java.security.GeneralSecurityException;

/**
 * A source of AES primitives backed by one implementation (OpenSSL through JNI or JNA, or JCE).
 *
 * <p>Every object an engine creates holds its own context, set up once with the key and reused:
 * a new IV or nonce never repeats the key schedule. Those objects are <b>not</b> thread-safe;
 * use one per thread. They hold native memory or key material, so close them when done (a
 * {@link java.lang.ref.Cleaner} frees native contexts that are forgotten, later).
 *
 * <p>The engine itself is stateless and thread-safe. Get one from {@link Engines}:
 *
 * <pre>{@code
 * CryptoEngine engine = Engines.auto();          // the fastest engine here for each operation
 * try (AeadCipher gcm = engine.newAesGcm(key)) {
 *     int n = gcm.seal(nonce, aad, plain, 0, plain.length, sealed, 0);
 * }
 * }</pre>
 */
public interface CryptoEngine {

    /**
     * Which implementation this is.
     *
     * @return this engine's kind, whose {@link EngineKind#id() id} names it in reports; for the
     *     engine of {@link Engines#auto()}, which may run each operation on another engine, the
     *     kind that runs AES-GCM sealing (see {@link #kindFor(Operation)})
     */
    EngineKind kind();

    /**
     * Which implementation runs an operation.
     *
     * @param op an operation
     * @return {@link #kind()} for a single engine; for the engine of {@link Engines#auto()}, the
     *     engine chosen for that operation (while a chosen engine warms up, another one may run
     *     the first calls: {@link Engines#report()} says which)
     */
    default EngineKind kindFor(Operation op) {
        return kind();
    }

    /**
     * The name of this engine in messages.
     *
     * @return the {@link EngineKind#id() id} of its kind, or {@code auto} for the engine of
     *     {@link Engines#auto()} when it runs operations on more than one engine
     */
    default String name() {
        return kind().id();
    }

    /**
     * AES-CTR (NIST SP 800-38A) with a 16-byte initial counter block. The counter is a 128-bit
     * big-endian integer incremented with carry across all 16 bytes, as in Hadoop and Commons
     * Crypto. CTR provides confidentiality only, no integrity.
     *
     * @param key 16, 24 or 32 bytes; copied, the caller keeps ownership of the array
     * @param iv the initial counter block, 16 bytes
     * @return a new cipher at counter block {@code iv}, to be closed after use; encryption and
     *     decryption are the same operation
     * @throws java.security.InvalidKeyException if the key is not 16, 24 or 32 bytes
     * @throws java.security.NoSuchAlgorithmException if this engine lacks AES-CTR (accp)
     * @throws GeneralSecurityException if the implementation rejects the key or lacks the
     *     algorithm
     * @throws IllegalArgumentException if the IV is not 16 bytes
     */
    StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException;

    /**
     * AES-CFB128, encrypting or decrypting; a baseline for the old CFB + HMAC-SHA256 scheme.
     *
     * @param key 16, 24 or 32 bytes; copied
     * @param iv 16 bytes
     * @param encrypt {@code true} to encrypt, {@code false} to decrypt (CFB differs)
     * @return a new cipher, to be closed after use
     * @throws java.security.InvalidKeyException if the key is not 16, 24 or 32 bytes
     * @throws java.security.NoSuchAlgorithmException if this engine lacks AES-CFB (accp)
     * @throws GeneralSecurityException if the implementation rejects the key or lacks the
     *     algorithm
     * @throws IllegalArgumentException if the IV is not 16 bytes
     */
    StreamCipher newAesCfb(byte[] key, byte[] iv, boolean encrypt) throws GeneralSecurityException;

    /**
     * AES-GCM with 12-byte nonces and 16-byte tags, for one-shot seal and open.
     *
     * @param key 16, 24 or 32 bytes; copied
     * @return a new cipher, to be closed after use; it seals and opens any number of messages,
     *     each with its own nonce
     * @throws java.security.InvalidKeyException if the key is not 16, 24 or 32 bytes
     * @throws GeneralSecurityException if the implementation rejects the key or lacks the
     *     algorithm
     */
    AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException;

    /**
     * HMAC-SHA256.
     *
     * @param key any non-empty length; copied
     * @return a new MAC, to be closed after use
     * @throws java.security.InvalidKeyException if the key is empty
     * @throws GeneralSecurityException if the implementation lacks the algorithm
     */
    Hmac newHmacSha256(byte[] key) throws GeneralSecurityException;
}
