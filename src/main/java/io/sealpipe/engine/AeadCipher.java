package io.sealpipe.engine;

import java.nio.ByteBuffer;
import javax.crypto.AEADBadTagException;

/**
 * AES-GCM, one message per call: {@link #seal} writes ciphertext followed by a 16-byte tag,
 * {@link #open} verifies the tag (in constant time, inside OpenSSL or JCE) and writes the
 * plaintext. A failed {@code open} leaves no decrypted byte in the output.
 *
 * <p>The caller supplies a unique 12-byte nonce per message and key; reusing one breaks GCM's
 * confidentiality and integrity. Higher layers (the chunked stream format) derive nonces
 * inside the library. Not thread-safe.
 */
public interface AeadCipher extends AutoCloseable {

    int NONCE_LENGTH = 12;
    int TAG_LENGTH = 16;

    /**
     * Encrypts {@code length} bytes and appends the tag.
     *
     * @param aad additional authenticated data, or {@code null}
     * @return {@code length + 16}, the bytes written to {@code out}
     */
    int seal(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset);

    /** As {@link #seal(byte[], byte[], byte[], int, int, byte[], int)}, advancing both buffers. */
    int seal(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out);

    /**
     * Verifies and decrypts {@code length} bytes (ciphertext and its 16-byte tag).
     *
     * @return {@code length - 16}, the plaintext bytes written to {@code out}
     * @throws AEADBadTagException if the tag does not verify (wrong key, nonce, AAD or data)
     */
    int open(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset)
            throws AEADBadTagException;

    /** As {@link #open(byte[], byte[], byte[], int, int, byte[], int)}, advancing both buffers. */
    int open(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out) throws AEADBadTagException;

    /** Frees the context and its key schedule; idempotent. */
    @Override
    void close();
}
