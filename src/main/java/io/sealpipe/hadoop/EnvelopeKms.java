package io.sealpipe.hadoop;

import java.io.Closeable;
import java.io.IOException;
import java.util.Arrays;

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
     * @return the data key and its wrapped form
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
     * that without handing the data key out ({@code sealpipe rewrap}).
     *
     * @param wrapped a data key as an envelope stores it
     * @return the same data key, wrapped under the current version of {@code wrapped}'s key
     * @throws IOException naming the key if the KMS refuses or fails
     */
    WrappedKey rewrap(WrappedKey wrapped) throws IOException;

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
            this.keyName = keyName;
            this.versionName = versionName;
            this.iv = iv.clone();
            this.wrapped = wrapped.clone();
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
     * A new data key: its wrapped form, the key (32 bytes), and the KMS requests its generation
     * took (Hadoop's KMS: a {@code GENERATE_EEK} and a {@code DECRYPT_EEK}). {@link #destroy}
     * zeroes the key.
     */
    final class DataKey {
        private final WrappedKey wrapped;
        private final byte[] key;
        private final int requests;

        /**
         * A new data key; takes {@code key} itself (no copy): the caller gives it up.
         *
         * @param wrapped its wrapped form
         * @param key the data key, 32 bytes
         * @param requests the KMS requests its generation took
         */
        public DataKey(WrappedKey wrapped, byte[] key, int requests) {
            this.wrapped = wrapped;
            this.key = key;
            this.requests = requests;
        }

        /** @return its wrapped form */
        public WrappedKey wrapped() {
            return wrapped;
        }

        /** @return the key itself, not a copy: read it before {@link #destroy} */
        public byte[] key() {
            return key;
        }

        /** @return the KMS requests its generation took */
        public int requests() {
            return requests;
        }

        /** Zeroes the key. */
        public void destroy() {
            Arrays.fill(key, (byte) 0);
        }

        @Override
        public String toString() {
            return "DataKey(" + wrapped + ")";
        }
    }
}
