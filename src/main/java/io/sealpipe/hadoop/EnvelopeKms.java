package io.sealpipe.hadoop;

import io.sealpipe.AesKey;
import java.io.Closeable;
import java.io.IOException;
import java.util.Objects;

/**
 * A KMS that generates and unwraps the data keys of envelope files ({@code
 * sealpipe.fs.key.mode=envelope}): the key that wraps them never leaves it. The sealed file
 * system makes one with the public constructor that takes the file system's {@link
 * org.apache.hadoop.conf.Configuration} (its own settings are there), names the class in {@code
 * sealpipe.fs.kms.class} ({@link SealedFileSystem#KMS_CLASS}), makes a new one every {@code
 * sealpipe.fs.key.refresh.seconds}, and closes the old one once no call runs on it. It keeps the
 * data keys itself, within their bounds: an implementation keeps none, and asks the KMS for each
 * call. Thread-safe: calls come from several threads at once.
 *
 * <p>Implementations: {@link HadoopEnvelopeKms} (Hadoop's {@code KeyProviderCryptoExtension}: a
 * Hadoop or Ranger KMS, {@code kms://}, or a keystore). docs/sealed-files.md, "Other KMSs", says
 * how to write one.
 *
 * <p>A refusal by the KMS (the caller may not use the key) is an {@link
 * org.apache.hadoop.security.AccessControlException}, so that it is told from a KMS that is down;
 * every failure names the key. No method logs or returns a key in a message.
 */
public interface EnvelopeKms extends Closeable {
    /**
     * The KMS kind that this KMS's envelopes carry (docs/FORMAT.md, "Envelope files"): {@value
     * HadoopEnvelopeKms#KIND} for a KMS that Hadoop's key providers speak to. This version of
     * sealpipe writes and reads that kind only: the file system refuses a client of any other.
     *
     * @return the kind, 1 to 255
     */
    int kind();

    /**
     * Where the KMS is, for messages.
     *
     * @return a provider URI or an endpoint; never a secret
     */
    String location();

    /**
     * A new data key of 32 bytes under the key {@code keyName} (as configured: a name, an id, an
     * alias), wrapped under its current version.
     *
     * @param keyName the key that wraps the data key, as {@code sealpipe.fs.key.name} names it
     * @return its wrapped form, with the data key itself where the KMS gives both at once
     * @throws IOException naming the key if the KMS refuses or fails
     */
    DataKey generate(String keyName) throws IOException;

    /**
     * The data key that {@code wrapped} holds.
     *
     * @param wrapped a data key as an envelope stores it
     * @return the data key, 32 bytes, which the caller zeroes once copied
     * @throws IOException naming the key if the KMS refuses, fails, or finds it was not wrapped by
     *     the key it names
     */
    byte[] unwrap(WrappedKey wrapped) throws IOException;

    /**
     * The same data key wrapped again under the current version of its key, where the KMS can do
     * that without handing the data key out.
     *
     * @param wrapped a data key as an envelope stores it
     * @return the same data key, wrapped under the current version of {@code wrapped}'s key
     * @throws IOException naming the key if the KMS refuses or fails
     */
    WrappedKey rewrap(WrappedKey wrapped) throws IOException;

    /**
     * What the caller needs on the key, added to the message when this KMS refuses a call, such as
     * {@code "a writer needs GENERATE_EEK and DECRYPT_EEK on the key"}.
     *
     * @return the permissions a writer and a reader need, or "" (the default) to add nothing
     */
    default String refusalAdvice() {
        return "";
    }

    /**
     * Whether {@link #rewrap} is proven inside the KMS to hold the same data key (AWS KMS's {@code
     * ReEncrypt}, which never hands the data key out). If not (the default), {@code sealpipe
     * rewrap} unwraps the new form and checks that it opens the file before it stores it.
     *
     * @return true if the KMS itself authenticates the data key it wraps again
     */
    default boolean rewrapKeepsDataKey() {
        return false;
    }

    /**
     * A data key in the form an envelope stores: the key that wrapped it (as configured), the
     * version or resolved id of that key the KMS names, the IV of the wrapping (empty where the
     * KMS keeps it in the wrapped bytes), and the wrapped bytes. Its arrays are copies.
     */
    final class WrappedKey {
        private final String keyName;
        private final String versionName;
        private final byte[] iv;
        private final byte[] wrapped;

        /**
         * A wrapped data key.
         *
         * @param keyName the key that wrapped it, as configured
         * @param versionName the version or resolved id of that key, as the KMS names it
         * @param iv the wrapping's IV, or empty
         * @param wrapped the wrapped bytes
         */
        public WrappedKey(String keyName, String versionName, byte[] iv, byte[] wrapped) {
            this.keyName = Objects.requireNonNull(keyName, "the key name of a wrapped data key");
            this.versionName = Objects.requireNonNull(versionName, "the key version of a wrapped data key");
            this.iv = Objects.requireNonNull(iv, "the IV of a wrapped data key (empty if none)").clone();
            this.wrapped = Objects.requireNonNull(wrapped, "the bytes of a wrapped data key").clone();
        }

        /** @return the key that wrapped the data key, as configured */
        public String keyName() {
            return keyName;
        }

        /** @return the version or resolved id of that key, as the KMS names it */
        public String versionName() {
            return versionName;
        }

        /** @return a copy of the wrapping's IV, or an empty array */
        public byte[] iv() {
            return iv.clone();
        }

        /** @return a copy of the wrapped bytes */
        public byte[] wrapped() {
            return wrapped.clone();
        }

        @Override
        public String toString() {
            return "WrappedKey(" + keyName + ", version " + versionName + ", " + wrapped.length + " bytes wrapped)";
        }
    }

    /**
     * A new data key: its wrapped form, and the key itself where the KMS gives it with the
     * wrapped form (AWS KMS's {@code GenerateDataKey}), or null where it must be unwrapped
     * (Hadoop's {@code GENERATE_EEK}): the file system then calls {@link #unwrap}.
     */
    final class DataKey {
        private final WrappedKey wrapped;
        private final AesKey key;

        /**
         * A new data key.
         *
         * @param wrapped its wrapped form
         * @param key the data key, 32 bytes (the caller's to destroy after), or null to unwrap
         */
        public DataKey(WrappedKey wrapped, AesKey key) {
            this.wrapped = Objects.requireNonNull(wrapped, "the wrapped form of a new data key");
            this.key = key;
        }

        /** @return its wrapped form */
        public WrappedKey wrapped() {
            return wrapped;
        }

        /** @return the data key, or null if it must be unwrapped */
        public AesKey key() {
            return key;
        }

        @Override
        public String toString() {
            return "DataKey(" + wrapped + ")";
        }
    }
}
