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

    /** Bytes of a nonce: 12, GCM's standard size. */
    int NONCE_LENGTH = 12;

    /** Bytes of the authentication tag: 16, GCM's full tag. */
    int TAG_LENGTH = 16;

    /**
     * Encrypts {@code length} bytes and appends the tag.
     *
     * @param nonce 12 bytes, never used twice with this key (the jce engine may also refuse a
     *     nonce it has just sealed with, with {@code IllegalArgumentException})
     * @param aad additional authenticated data, or {@code null}
     * @param in the plaintext
     * @param inOffset where the plaintext starts in {@code in}
     * @param length plaintext bytes
     * @param out receives {@code length + 16} bytes; may be {@code in} at the same offset (in
     *     place), but no other overlap with the input
     * @param outOffset where to write in {@code out}
     * @return {@code length + 16}, the bytes written to {@code out}
     * @throws IllegalArgumentException if the nonce is not 12 bytes or the ranges overlap
     * @throws IndexOutOfBoundsException if a range does not fit its array
     * @throws IllegalStateException if this cipher is closed
     */
    int seal(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset);

    /**
     * As {@link #seal(byte[], byte[], byte[], int, int, byte[], int)} for all remaining bytes of
     * {@code in}, advancing both buffers. Heap and direct buffers both work; a read-only heap
     * input is copied first.
     *
     * @param nonce 12 bytes, never used twice with this key
     * @param aad additional authenticated data, or {@code null}
     * @param in the plaintext, from its position to its limit
     * @param out receives the ciphertext and tag at its position
     * @return {@code in.remaining() + 16} (as it was before the call), the bytes written
     * @throws IllegalArgumentException if the nonce is not 12 bytes or {@code out} has too
     *     little room
     * @throws java.nio.ReadOnlyBufferException if {@code out} is read-only
     */
    int seal(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out);

    /**
     * Verifies and decrypts {@code length} bytes (ciphertext and its 16-byte tag).
     *
     * @param nonce the 12-byte nonce the message was sealed with
     * @param aad the additional authenticated data it was sealed with, or {@code null}
     * @param in the ciphertext followed by the tag
     * @param inOffset where the ciphertext starts in {@code in}
     * @param length bytes of ciphertext and tag, at least 16
     * @param out receives {@code length - 16} plaintext bytes only if the tag verifies; may be
     *     {@code in} at the same offset (in place), but no other overlap with the input
     * @param outOffset where to write in {@code out}
     * @return {@code length - 16}, the plaintext bytes written to {@code out}
     * @throws AEADBadTagException if the tag does not verify (wrong key, nonce, AAD or data) or
     *     {@code length} is shorter than a tag
     * @throws IllegalArgumentException if the nonce is not 12 bytes or the ranges overlap
     * @throws IndexOutOfBoundsException if a range does not fit its array
     * @throws IllegalStateException if this cipher is closed
     */
    int open(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset)
            throws AEADBadTagException;

    /**
     * As {@link #open(byte[], byte[], byte[], int, int, byte[], int)} for all remaining bytes of
     * {@code in}, advancing both buffers only if the tag verifies.
     *
     * @param nonce the 12-byte nonce the message was sealed with
     * @param aad the additional authenticated data it was sealed with, or {@code null}
     * @param in the ciphertext and tag, from its position to its limit
     * @param out receives the plaintext at its position
     * @return {@code in.remaining() - 16} (as it was before the call), the bytes written
     * @throws AEADBadTagException if the tag does not verify or the input is shorter than a tag
     * @throws IllegalArgumentException if the nonce is not 12 bytes or {@code out} has too
     *     little room
     * @throws java.nio.ReadOnlyBufferException if {@code out} is read-only
     */
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
     * @param baseNonce the message's 12-byte base nonce
     * @param firstChunk index of the first chunk, from 0
     * @param in {@code count * 16384} bytes of plaintext
     * @param inOffset where the plaintext starts in {@code in}
     * @param count how many chunks, 0 or more
     * @param out receives {@code count * 16400} bytes; must not overlap the input
     * @param outOffset where to write in {@code out}
     * @throws IllegalArgumentException if a chunk index would reach 2^38 or the ranges overlap
     * @throws IndexOutOfBoundsException if a range does not fit its array
     * @throws IllegalStateException if this cipher is closed
     */
    void sealChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out, int outOffset);

    /**
     * Opens {@code count} sealed full chunks (16400 bytes each, numbered from
     * {@code firstChunk} as in {@link #sealChunks}) into 16384 bytes each, in order, and
     * stops at the first that fails its tag. A failed chunk is not an exception here: the
     * caller decides, from the returned count, what to report.
     *
     * @param baseNonce the message's 12-byte base nonce
     * @param firstChunk index of the first chunk, from 0
     * @param in {@code count * 16400} bytes of sealed chunks
     * @param inOffset where the sealed chunks start in {@code in}
     * @param count how many chunks, 0 or more
     * @param out receives up to {@code count * 16384} bytes; must not overlap the input
     * @param outOffset where to write in {@code out}
     * @return how many chunks, from the first, were authenticated and written: {@code count},
     *     or the index (relative to {@code firstChunk}) of the chunk that failed, whose output
     *     is then zeroed
     * @throws IllegalArgumentException if a chunk index would reach 2^38 or the ranges overlap
     * @throws IndexOutOfBoundsException if a range does not fit its array
     * @throws IllegalStateException if this cipher is closed
     */
    int openChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out, int outOffset);

    /**
     * As {@link #openChunks(byte[], long, byte[], int, int, byte[], int)} for the sealed chunks
     * in {@code in}'s remaining bytes (a multiple of 16400), advancing both buffers past the
     * chunks that were authenticated.
     *
     * @param baseNonce the message's 12-byte base nonce
     * @param firstChunk index of the chunk at {@code in}'s position, from 0
     * @param in whole sealed chunks, from its position to its limit
     * @param out receives 16384 bytes per chunk at its position
     * @return how many chunks were authenticated and written, as for the array form
     * @throws IllegalArgumentException if the input is not whole sealed chunks, {@code out} has
     *     too little room, a chunk index would reach 2^38 or the buffers overlap
     */
    int openChunks(byte[] baseNonce, long firstChunk, ByteBuffer in, ByteBuffer out);

    /**
     * Frees the context and its key schedule; idempotent. Safe from another thread
     * while a call runs: close() returns at once, the running call finishes normally and frees
     * the context as it leaves, and a call that starts after close() fails with
     * IllegalStateException.
     */
    @Override
    void close();
}
