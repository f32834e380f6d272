package io.sealpipe.internal.hadoop;

import io.sealpipe.hadoop.EnvelopeKms;
import io.sealpipe.internal.Envelope;
import java.io.IOException;

/** Between an envelope and the wrapped data key that a KMS client ({@link EnvelopeKms}) takes and gives. */
public final class EnvelopeWrapping {
    private EnvelopeWrapping() {
    }

    /** {@code envelope}'s data key in the form a KMS client takes. */
    public static EnvelopeKms.WrappedKey wrappedKey(Envelope envelope) {
        return new EnvelopeKms.WrappedKey(envelope.keyName(), envelope.versionName(), envelope.iv(),
                envelope.wrappedKey());
    }

    /**
     * The envelope of a new file whose data key {@code kms} wrapped as {@code wrapped}.
     *
     * @throws IOException if the KMS's answer does not fit in an envelope, naming the KMS
     */
    public static Envelope envelope(EnvelopeKms kms, boolean compressed, EnvelopeKms.WrappedKey wrapped)
            throws IOException {
        try {
            return Envelope.of(kms.kind(), compressed, wrapped.keyName(), wrapped.versionName(), wrapped.iv(),
                    wrapped.wrapped());
        } catch (IOException e) {
            throw new IOException("the KMS " + kms.location() + " answered the generation of a data key under '"
                    + wrapped.keyName() + "' with a wrapped key that an envelope cannot hold: " + e.getMessage(), e);
        }
    }
}
