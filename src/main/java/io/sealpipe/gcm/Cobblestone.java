package io.sealpipe.gcm;

import io.sealpipe.StreamAuthenticationException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * The layout and key schedule of c2sp.org/chunked-encryption with SHA-512 and AES-GCM
 * (Cobblestone-128 and Cobblestone-256), as specified in docs/FORMAT.md:
 *
 * <pre>
 * key || base nonce || commitment = HKDF-Expand-SHA-512(input key,
 *         "c2sp.org/chunked-encryption@v1+" || aead name || 0x00 || salt || context)
 * ciphertext = salt (24) || commitment (32) || chunk 0 || chunk 1 || ... || final chunk
 * chunk i    = AES-GCM(key, base nonce XOR i, 16384 bytes of plaintext, no AAD)  (16400 bytes)
 * final chunk: the same with 0..16383 bytes of plaintext, so always shorter than a full chunk
 * </pre>
 */
final class Cobblestone {
    private Cobblestone() {}

    static final int SALT_LENGTH = 24;
    static final int COMMITMENT_LENGTH = 32;
    static final int HEADER_LENGTH = SALT_LENGTH + COMMITMENT_LENGTH;
    static final int CHUNK_SIZE = 16 * 1024;
    static final int TAG_LENGTH = 16;
    static final int SEALED_CHUNK_SIZE = CHUNK_SIZE + TAG_LENGTH;
    static final int NONCE_LENGTH = 12;
    /** Chunk indices must stay below 2^38 (the spec's limit: 4 PiB - 1 byte of plaintext). */
    static final long MAX_CHUNKS = 1L << 38;

    /** SHA-512's block: HMAC pads the key to this length (RFC 2104, B = 128). */
    private static final int HMAC_BLOCK = 128;

    private static final byte[] INFO_PREFIX = "c2sp.org/chunked-encryption@v1+".getBytes(StandardCharsets.US_ASCII);

    /** The IANA name of the AEAD for an input key of this length (16 or 32 bytes). */
    static String aeadName(int keyLength) {
        return switch (keyLength) {
            case 16 -> "AEAD_AES_128_GCM";
            case 32 -> "AEAD_AES_256_GCM";
            default -> throw new IllegalArgumentException("key must be 16 or 32 bytes, not " + keyLength);
        };
    }

    /** Derived per-message secrets; {@link #destroy()} zeroes them. */
    static final class MessageKeys {
        final byte[] key;
        final byte[] baseNonce;
        final byte[] commitment;

        MessageKeys(byte[] key, byte[] baseNonce, byte[] commitment) {
            this.key = key;
            this.baseNonce = baseNonce;
            this.commitment = commitment;
        }

        /** Whether {@code candidate[offset, offset + 32)} equals the commitment, in constant time. */
        boolean commitmentMatches(byte[] candidate, int offset) {
            return MessageDigest.isEqual(commitment, Arrays.copyOfRange(candidate, offset, offset + COMMITMENT_LENGTH));
        }

        void destroy() {
            Arrays.fill(key, (byte) 0);
            Arrays.fill(baseNonce, (byte) 0);
            Arrays.fill(commitment, (byte) 0);
        }

        @Override
        public String toString() {
            return "MessageKeys[redacted]";
        }
    }

    /** HKDF-Expand-SHA-512 of the input key for one message (salt, context), split in three. */
    static MessageKeys derive(byte[] inputKey, byte[] salt, byte[] context) {
        if (salt.length != SALT_LENGTH) {
            throw new IllegalArgumentException("salt must be " + SALT_LENGTH + " bytes, not " + salt.length);
        }
        byte[] name = aeadName(inputKey.length).getBytes(StandardCharsets.US_ASCII);
        byte[] info = new byte[INFO_PREFIX.length + name.length + 1 + SALT_LENGTH + context.length];
        int at = 0;
        System.arraycopy(INFO_PREFIX, 0, info, at, INFO_PREFIX.length);
        at += INFO_PREFIX.length;
        System.arraycopy(name, 0, info, at, name.length);
        at += name.length + 1; // then 0x00
        System.arraycopy(salt, 0, info, at, SALT_LENGTH);
        at += SALT_LENGTH;
        System.arraycopy(context, 0, info, at, context.length);

        byte[] okm = hkdfExpandSha512(inputKey, info, inputKey.length + NONCE_LENGTH + COMMITMENT_LENGTH);
        try {
            return new MessageKeys(
                    Arrays.copyOfRange(okm, 0, inputKey.length),
                    Arrays.copyOfRange(okm, inputKey.length, inputKey.length + NONCE_LENGTH),
                    Arrays.copyOfRange(okm, inputKey.length + NONCE_LENGTH, okm.length));
        } finally {
            Arrays.fill(okm, (byte) 0);
        }
    }

    /**
     * HKDF-Expand (RFC 5869, section 2.3) with HMAC-SHA-512.
     *
     * <p>HMAC is computed here on {@link MessageDigest} (RFC 2104) rather than with
     * {@code javax.crypto.Mac}, so that every copy of {@code prk} it makes is one we can wipe:
     * a {@code Mac} needs a {@code SecretKeySpec}, which clones the key and cannot be wiped, and
     * SunJCE's HMAC keeps the key XORed with its pads until the {@code Mac} is collected. Here the
     * padded key lives in two local arrays zeroed before returning, and {@code digest()} resets
     * the digest's own state (the SUN provider zeroes its buffer and message schedule).
     */
    static byte[] hkdfExpandSha512(byte[] prk, byte[] info, int length) {
        if (length < 0 || length > 255 * 64) {
            throw new IllegalArgumentException("HKDF-Expand-SHA-512 output must be 0.." + 255 * 64 + " bytes, not " + length);
        }
        if (prk.length == 0) {
            throw new IllegalArgumentException("HKDF key must not be empty");
        }
        MessageDigest sha512 = sha512();
        byte[] innerPad = new byte[HMAC_BLOCK];
        byte[] outerPad = new byte[HMAC_BLOCK];
        byte[] okm = new byte[length];
        byte[] t = new byte[0];
        try {
            hmacPads(sha512, prk, innerPad, outerPad);
            for (int i = 1, done = 0; done < length; i++) {
                sha512.update(innerPad);
                sha512.update(t);
                sha512.update(info);
                sha512.update((byte) i);
                byte[] inner = sha512.digest();
                sha512.update(outerPad);
                sha512.update(inner);
                Arrays.fill(inner, (byte) 0);
                Arrays.fill(t, (byte) 0);
                t = sha512.digest();
                int n = Math.min(t.length, length - done);
                System.arraycopy(t, 0, okm, done, n);
                done += n;
            }
            return okm;
        } finally {
            Arrays.fill(innerPad, (byte) 0);
            Arrays.fill(outerPad, (byte) 0);
            Arrays.fill(t, (byte) 0);
        }
    }

    /** key XOR ipad and key XOR opad; a key longer than a block is hashed first (RFC 2104). */
    private static void hmacPads(MessageDigest sha512, byte[] key, byte[] innerPad, byte[] outerPad) {
        byte[] k = key.length > HMAC_BLOCK ? sha512.digest(key) : key;
        try {
            for (int i = 0; i < HMAC_BLOCK; i++) {
                byte b = i < k.length ? k[i] : 0;
                innerPad[i] = (byte) (b ^ 0x36);
                outerPad[i] = (byte) (b ^ 0x5c);
            }
        } finally {
            if (k != key) {
                Arrays.fill(k, (byte) 0);
            }
        }
    }

    private static MessageDigest sha512() {
        try {
            return MessageDigest.getInstance("SHA-512");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-512 is not available in this JDK", e);
        }
    }

    /** Writes the nonce of chunk {@code index} (base nonce XOR the big-endian index) into {@code out}. */
    static void chunkNonce(byte[] baseNonce, long index, byte[] out) {
        System.arraycopy(baseNonce, 0, out, 0, NONCE_LENGTH);
        for (int i = 0; i < 8; i++) {
            out[NONCE_LENGTH - 1 - i] ^= (byte) (index >>> (8 * i));
        }
    }

    // The failures every reader of the format reports, in one wording.

    /** The ciphertext ends inside the header. */
    static StreamAuthenticationException shortHeader(long available) {
        return new StreamAuthenticationException("truncated message: " + available + " bytes, shorter than the "
                + HEADER_LENGTH + "-byte header (salt and key commitment)", -1);
    }

    /** The commitment recomputed from the salt, key and context differs from the stored one. */
    static StreamAuthenticationException commitmentMismatch() {
        return new StreamAuthenticationException("the key commitment does not match: wrong key or context, or a"
                + " modified header; no chunk was decrypted", -1);
    }

    /** Chunk {@code chunk}'s tag did not verify; {@code cause} may be null. */
    static StreamAuthenticationException chunkFailed(long chunk, Throwable cause) {
        return new StreamAuthenticationException("chunk " + chunk + " (plaintext bytes from " + chunk * CHUNK_SIZE
                + ") failed authentication: the ciphertext was modified, truncated or reordered", chunk, cause);
    }

    /**
     * The ciphertext ends where chunk {@code chunk} should be the final one: right after a full
     * chunk ({@code available} 0), or with fewer bytes than a tag.
     */
    static StreamAuthenticationException missingEnd(long chunk, int available) {
        String where = available > 0 ? "only " + available + " bytes of chunk " + chunk + ", less than its 16-byte tag"
                : chunk == 0 ? "it ends after its header, so the final chunk is missing"
                : "it ends with a full chunk (chunk " + (chunk - 1) + "), so its short final chunk is missing";
        return new StreamAuthenticationException("truncated message: " + where
                + " (after " + chunk * CHUNK_SIZE + " bytes of plaintext)", -1);
    }

    /** Full chunks would leave no index below 2^38 for the final chunk. */
    static StreamAuthenticationException tooManyChunks() {
        return new StreamAuthenticationException("the message has more than 2^38 chunks, the format's limit: it is"
                + " not a valid message", -1);
    }

    /** Offset of chunk {@code index} in the ciphertext (after the header). */
    static long chunkOffset(long index) {
        return HEADER_LENGTH + index * SEALED_CHUNK_SIZE;
    }

    /**
     * The plaintext length a ciphertext of this length must hold, or -1 if no message
     * encrypts to that length (too short for the header, or the final chunk missing or shorter
     * than its tag).
     */
    static long plaintextLength(long ciphertextLength) {
        if (ciphertextLength < HEADER_LENGTH + TAG_LENGTH) {
            return -1;
        }
        long body = ciphertextLength - HEADER_LENGTH;
        long fullChunks = body / SEALED_CHUNK_SIZE;
        long rest = body % SEALED_CHUNK_SIZE;
        if (rest < TAG_LENGTH || fullChunks >= MAX_CHUNKS) {
            return -1;
        }
        return fullChunks * CHUNK_SIZE + rest - TAG_LENGTH;
    }
}
