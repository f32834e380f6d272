package io.sealpipe.internal.sealed;

import io.sealpipe.gcm.GcmStreams;

/**
 * Where a sealed file's plaintext is in its stored bytes (docs/FORMAT.md): an optional prefix
 * (an envelope's 512 bytes, or none), the message's 56-byte header, then chunks of 16384
 * plaintext bytes and a 16-byte tag each, the last one shorter. Every length follows from the
 * other with no read.
 */
public final class SealedLayout {
    /** Plaintext bytes per chunk. */
    public static final int CHUNK = 16 * 1024;
    /** Stored bytes per whole chunk: its plaintext and its tag. */
    public static final int SEALED_CHUNK = CHUNK + 16;

    private SealedLayout() {
    }

    /**
     * {@link GcmStreams#plaintextLength} of a message after {@code prefix} bytes.
     *
     * @return the plaintext length, or -1 for a stored length no such file has
     */
    public static long plaintextLength(long storedLength, long prefix) {
        return storedLength < prefix ? -1 : GcmStreams.plaintextLength(storedLength - prefix);
    }

    /**
     * The plaintext length a file of {@code storedLength} stored bytes lists with: a sealed
     * file's, or, for a length no sealed file has (one still being written, or cut short), the
     * plaintext of its whole sealed chunks and one byte more. That byte is past what can be read:
     * a reader of the whole listed length reaches the missing end and fails, and never takes the
     * whole chunks for the whole file (nor a file with none for an empty one).
     *
     * @param prefix the stored bytes before the message: an envelope's 512, or 0
     * @return the plaintext length, 0 or more (1 or more for a length no sealed file has)
     */
    public static long listedLength(long storedLength, long prefix) {
        long sealed = plaintextLength(storedLength, prefix);
        if (sealed >= 0) {
            return sealed;
        }
        return Math.max(0, storedLength - prefix - GcmStreams.HEADER_LENGTH) / SEALED_CHUNK * CHUNK + 1;
    }

    /** The stored length of {@code plainLength} bytes in a message after {@code prefix} bytes. */
    public static long storedLength(long plainLength, long prefix) {
        return prefix + GcmStreams.ciphertextLength(plainLength);
    }

    /** Where the chunk holding plaintext byte {@code plain} starts in the stored file. */
    public static long storedOffset(long plain, long prefix) {
        return prefix + GcmStreams.HEADER_LENGTH + (plain / CHUNK) * SEALED_CHUNK;
    }

    /**
     * Whether a plaintext length has a stored length ({@link #storedLength} does not overflow):
     * fewer than 2^38 chunks, as the format allows.
     */
    public static boolean isStorable(long plainLength) {
        return plainLength >= 0 && plainLength / CHUNK < (1L << 38);
    }
}
