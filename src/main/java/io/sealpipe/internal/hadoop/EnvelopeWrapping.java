package io.sealpipe.internal.hadoop;

import io.sealpipe.hadoop.EnvelopeKms;
import io.sealpipe.internal.Envelope;
import java.io.IOException;
import java.util.Arrays;

/**
 * Between an envelope and what a KMS client ({@link EnvelopeKms}) takes and gives, with the
 * checks of its answers: for the sealed file system and the CLI alike.
 */
public final class EnvelopeWrapping {
    private EnvelopeWrapping() {
    }

    /** {@code envelope}'s data key in the form a KMS client takes. */
    public static EnvelopeKms.WrappedKey wrappedKey(Envelope envelope) {
        return new EnvelopeKms.WrappedKey(envelope.keyName(), envelope.versionName(), envelope.iv(),
                envelope.wrappedKey());
    }

    /**
     * The envelope of a new file whose data key {@code kms} made as {@code made}, asked for under
     * {@code keyName}: checked to be an answer, under that key, that an envelope can hold.
     *
     * @throws IOException naming the KMS and the key if it is not
     */
    public static Envelope envelope(EnvelopeKms kms, String keyName, boolean compressed, EnvelopeKms.DataKey made)
            throws IOException {
        String asked = "the KMS " + kms.location() + " answered the generation of a data key under '" + keyName + "'";
        if (made == null) {
            throw new IOException(asked + " with nothing");
        }
        EnvelopeKms.WrappedKey wrapped = made.wrapped();
        if (!wrapped.keyName().equals(keyName)) {
            throw new IOException(asked + " with one under '" + wrapped.keyName() + "'");
        }
        if (made.key() != null && made.key().length() != Envelope.DATA_KEY_BYTES) {
            throw new IOException(asked + " with a data key of " + made.key().length() + " bytes, not "
                    + Envelope.DATA_KEY_BYTES);
        }
        try {
            return Envelope.of(kms.kind(), compressed, keyName, wrapped.versionName(), wrapped.iv(), wrapped.wrapped());
        } catch (IOException e) {
            throw new IOException(asked + " with a wrapped key that an envelope cannot hold: " + e.getMessage(), e);
        }
    }

    /**
     * Refuses {@code envelope} before any KMS call if another kind of KMS wrapped its data key
     * than {@code kms}; {@code choose} says how to choose a client of its kind.
     */
    public static void checkKind(Envelope envelope, EnvelopeKms kms, String choose) throws IOException {
        if (envelope.kind() != kms.kind()) {
            throw new IOException("its data key was wrapped by a KMS of kind " + Envelope.describeKind(envelope.kind())
                    + ", and the KMS client given (" + kms.location() + ") is of kind "
                    + Envelope.describeKind(kms.kind()) + ": refused before any KMS call; " + choose);
        }
    }

    /**
     * {@code material}, which {@code kms} unwrapped from {@code envelope}, if it is a data key;
     * else zeroes it and throws, naming the KMS and the key.
     */
    public static byte[] checkedDataKey(byte[] material, Envelope envelope, EnvelopeKms kms) throws IOException {
        if (material != null && material.length == Envelope.DATA_KEY_BYTES) {
            return material;
        }
        if (material != null) {
            Arrays.fill(material, (byte) 0);
        }
        throw new IOException("the KMS " + kms.location() + " gave the data key of key '" + envelope.keyName()
                + "' (version " + envelope.versionName() + ") as " + (material == null ? "nothing"
                        : material.length + " bytes") + ", not the " + Envelope.DATA_KEY_BYTES + " of a 256-bit data key"
                + ": the KMS key must make 256-bit data keys (Hadoop's KMS: hadoop key create NAME -size 256)");
    }
}
