package io.sealpipe.internal.hadoop;

import io.sealpipe.Parallelism;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.hadoop.HadoopEnvelopeKms;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.OptionalDependency;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;

/**
 * The sealed file system's settings ({@code sealpipe.fs.*}, see {@link SealedFileSystem}), read
 * and checked once, with the keys they name: the sealed file system and the sealed Iceberg
 * FileIO read them in the same way, with the same messages.
 *
 * @param compress whether new files are compressed ({@value SealedFileSystem#COMPRESS}{@code =snappy})
 * @param parallelism threads that seal one written file's chunks
 * @param cachedChunks decrypted chunks an open file keeps
 * @param downgradeSyncable whether partial-chunk hflush/hsync only flush
 * @param readMode which files open, and which kind new files are
 */
public record SealedSettings(boolean compress, int parallelism, int cachedChunks, boolean downgradeSyncable,
        SealedReader.KeyMode readMode) {

    /**
     * Reads the settings from {@code conf}.
     *
     * @throws IOException if the compression or the key mode is one sealed files do not know, or
     *     snappy-java is missing for compression
     * @throws IllegalArgumentException if a number or flag setting is out of range or malformed
     */
    public static SealedSettings of(Configuration conf) throws IOException {
        String compression = conf.getTrimmed(SealedFileSystem.COMPRESS, "none");
        if (!compression.equals("none") && !compression.equals("snappy")) {
            throw new IOException(SealedFileSystem.COMPRESS + "=" + compression + " is not a compression sealed files know:"
                    + " use none (the default) or snappy");
        }
        boolean compress = compression.equals("snappy");
        if (compress && !OptionalDependency.SNAPPY.isPresent()) {
            throw new IOException(SealedFileSystem.COMPRESS + "=snappy needs snappy-java: " + OptionalDependency.SNAPPY.absence());
        }
        int parallelism = conf.getInt(SealedFileSystem.PARALLELISM, 1);
        if (parallelism < 1 || parallelism > Parallelism.MAX) {
            throw new IllegalArgumentException(SealedFileSystem.PARALLELISM + " must be 1.." + Parallelism.MAX + ", not "
                    + parallelism);
        }
        int cachedChunks = conf.getInt(SealedFileSystem.CACHE_CHUNKS, GcmSeekableChannel.DEFAULT_CACHED_CHUNKS);
        if (cachedChunks < 0 || cachedChunks > GcmSeekableChannel.MAX_CACHED_CHUNKS) {
            throw new IllegalArgumentException(SealedFileSystem.CACHE_CHUNKS + " must be 0.."
                    + GcmSeekableChannel.MAX_CACHED_CHUNKS + ", not " + cachedChunks);
        }
        boolean downgrade = flag(conf, SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS);
        String mode = conf.getTrimmed(SealedFileSystem.KEY_MODE, "direct");
        if (!mode.equals("direct") && !mode.equals("envelope")) {
            throw new IOException(SealedFileSystem.KEY_MODE + "=" + mode + " is not a key mode sealed files know: use direct"
                    + " (the default: the key's own material) or envelope (data keys wrapped by the KMS)");
        }
        boolean readOther = flag(conf, SealedFileSystem.KEY_MODE_READ_OTHER);
        return new SealedSettings(compress, parallelism, cachedChunks, downgrade,
                new SealedReader.KeyMode(mode.equals("envelope"), readOther));
    }

    private static boolean flag(Configuration conf, String key) {
        String value = conf.getTrimmed(key, "false");
        if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException(key + " must be true or false, not " + value);
        }
        return Boolean.parseBoolean(value);
    }

    /** Whether new files are envelope files. */
    public boolean envelopeMode() {
        return readMode.envelope();
    }

    /** The stored bytes before each message, as this mode writes files: 0 or 512. */
    public long prefix() {
        return readMode.prefix();
    }

    /**
     * The key's own versions, for direct-key files; null in envelope mode under a KMS that is no
     * Hadoop key provider (AWS KMS): then no direct-key file can be read, and none is written.
     */
    public SealedKeys loadKeys(Configuration conf) throws IOException {
        boolean provider = !envelopeMode() || !conf.getTrimmed(SealedFileSystem.KEY_PROVIDER_PATH, "").isEmpty()
                || EnvelopeKeys.kmsClass(conf) == HadoopEnvelopeKms.class;
        return provider ? SealedKeys.load(conf, parallelism, !envelopeMode()) : null;
    }

    /**
     * The data keys of envelope files.
     *
     * @param binding the URI of the storage sealed (for per-bucket KMS settings), or null
     */
    public EnvelopeKeys loadEnvelopes(Configuration conf, URI binding) throws IOException {
        return EnvelopeKeys.load(conf, binding, parallelism, null, System::nanoTime);
    }
}
