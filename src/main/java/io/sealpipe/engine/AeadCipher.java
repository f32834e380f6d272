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

    /** Plaintext bytes of a full chunk of c2sp.org/chunked-encryption. */
    int CHUNK_SIZE = 16 * 1024;

    /** Bytes of a sealed full chunk: its ciphertext, then its tag. */
    int SEALED_CHUNK_SIZE = CHUNK_SIZE + TAG_LENGTH;

    /**
     * Seals {@code count} full chunks of c2sp.org/chunked-encryption: the 16384-byte chunks of
     * {@code in} become chunks {@code firstChunk}, {@code firstChunk + 1}, ... of 16400 bytes
     * each in {@code out}, chunk i with nonce {@code baseNonce} XOR i (big-endian) and no AAD.
     * The OpenSSL JNI engine does them all in one native call.
     *
     * @throws IllegalArgumentException if a chunk index would reach 2^38 or the ranges overlap
     */
    void sealChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out, int outOffset);

    /**
     * Opens {@code count} sealed full chunks (16400 bytes each, numbered from
     * {@code firstChunk} as in {@link #sealChunks}) into 16384 bytes each, in order, and
     * stops at the first that fails its tag.
     *
     * @return how many chunks, from the first, were authenticated and written: {@code count},
     *     or the index (relative to {@code firstChunk}) of the chunk that failed, whose output
     *     is then zeroed
     */
    int openChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out, int outOffset);

    /**
     * As {@link #openChunks(byte[], long, byte[], int, int, byte[], int)} for the sealed chunks
     * in {@code in}'s remaining bytes (a multiple of 16400), advancing both buffers past the
     * chunks that were authenticated.
     */
    int openChunks(byte[] baseNonce, long firstChunk, ByteBuffer in, ByteBuffer out);

    /** Frees the context and its key schedule; idempotent. */
    @Override
    void close();
}
