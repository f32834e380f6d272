package io.sealpipe.gcm;

/**
 * The chunked format's package-private sizes and key derivation, for the tests outside this
 * package that check keys and memory across formats (io.sealpipe's key-lifetime and heap tests).
 */
public final class GcmInternals {
    /** Plaintext bytes per chunk. */
    public static final int CHUNK_SIZE = Cobblestone.CHUNK_SIZE;
    /** A sealed chunk: the chunk and its tag. */
    public static final int SEALED_CHUNK_SIZE = Cobblestone.SEALED_CHUNK_SIZE;
    /** The salt that starts every message. */
    public static final int SALT_LENGTH = Cobblestone.SALT_LENGTH;
    /** Chunks per batch of the parallel writer in this JVM. */
    public static final int BATCH_CHUNKS = GcmParallelWriter.BATCH_CHUNKS;
    /** Chunks a sequential writer seals per call to its sink. */
    public static final int CHUNKS_PER_WRITE = GcmOutputStream.CHUNKS_PER_WRITE;

    private GcmInternals() {}

    /** {@code builder} with every message's salt fixed, for byte-for-byte expectations (never in production). */
    public static GcmStreams.Builder fixedSalt(GcmStreams.Builder builder, byte[] salt) {
        return builder.fixedSaltForTests(salt);
    }

    /** The AES-GCM key of the message with this input key, salt and context; its other secrets are wiped. */
    public static byte[] messageKey(byte[] inputKey, byte[] salt, byte[] context) {
        Cobblestone.MessageKeys keys = Cobblestone.derive(inputKey, salt, context);
        try {
            return keys.key.clone();
        } finally {
            keys.destroy();
        }
    }
}
