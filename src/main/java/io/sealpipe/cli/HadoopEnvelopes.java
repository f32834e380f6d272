package io.sealpipe.cli;

import io.sealpipe.internal.Envelope;
import io.sealpipe.internal.hadoop.KmsGeneration;
import java.io.IOException;
import java.net.URI;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension.EncryptedKeyVersion;
import org.apache.hadoop.crypto.key.KeyProviderFactory;

/**
 * Data keys for envelope files ({@code --key-mode envelope}), through Hadoop's
 * {@code KeyProviderCryptoExtension}: generated wrapped and unwrapped by the KMS, whose key
 * never reaches this process. Needs hadoop-common on the class path
 * ({@link HadoopProviderKeys#available()}).
 */
final class HadoopEnvelopes {
    private HadoopEnvelopes() {}

    /** A new data key and its envelope; the caller wipes {@code key}. */
    record DataKey(Envelope envelope, byte[] key) {}

    /** A new data key of key {@code name}, wrapped by the provider at {@code uri} (GENERATE_EEK, then DECRYPT_EEK). */
    static DataKey generate(URI uri, String name, boolean compressed) throws IOException {
        KeyProviderCryptoExtension kms = open(uri);
        try {
            EncryptedKeyVersion wrapped = kms.generateEncryptedKey(name);
            Envelope envelope = Envelope.of(compressed, name, wrapped.getEncryptionKeyVersionName(),
                    wrapped.getEncryptedKeyIv() == null ? new byte[0] : wrapped.getEncryptedKeyIv(),
                    wrapped.getEncryptedKeyVersion().getMaterial());
            return new DataKey(envelope, unwrap(kms, envelope));
        } catch (GeneralSecurityException | IOException | RuntimeException e) {
            throw failed("generate a data key under", "'" + name + "'", e);
        } finally {
            kms.close();
        }
    }

    /** The data key of {@code envelope}, unwrapped by the provider at {@code uri} (DECRYPT_EEK); the caller wipes it. */
    static byte[] unwrap(URI uri, Envelope envelope) throws IOException {
        KeyProviderCryptoExtension kms = open(uri);
        try {
            return unwrap(kms, envelope);
        } catch (GeneralSecurityException | IOException | RuntimeException e) {
            throw failed("unwrap the data key of", "'" + envelope.keyName() + "' (version " + envelope.versionName() + ")", e);
        } finally {
            kms.close();
        }
    }

    private static byte[] unwrap(KeyProviderCryptoExtension kms, Envelope envelope)
            throws IOException, GeneralSecurityException {
        KeyProvider.KeyVersion key = kms.decryptEncryptedKey(EncryptedKeyVersion.createForDecryption(envelope.keyName(),
                envelope.versionName(), envelope.iv(), envelope.wrappedKey()));
        byte[] material = key == null ? null : key.getMaterial();
        if (material == null || material.length != Envelope.DATA_KEY_BYTES) {
            if (material != null) {
                Arrays.fill(material, (byte) 0);
            }
            throw new IOException("the --key-provider unwrapped the data key to " + (material == null ? "nothing"
                    : material.length + " bytes") + ", not 32: the key must be 256 bits");
        }
        byte[] copy = material.clone();
        Arrays.fill(material, (byte) 0);
        return copy;
    }

    private static KeyProviderCryptoExtension open(URI uri) throws IOException {
        Configuration conf = new Configuration();
        // One wrapped key per request where KmsGeneration cannot go past the queue of Hadoop's KMS
        // client, which would otherwise fetch 150 (and 350 more) for one file.
        conf.setInt("hadoop.security.kms.client.encrypted.key.cache.size", 1);
        conf.setFloat("hadoop.security.kms.client.encrypted.key.cache.low-watermark", 1f);
        KeyProvider provider = KeyProviderFactory.get(uri, conf);
        if (provider == null) {
            throw new IOException("Hadoop knows no key provider for the --key-provider's scheme '" + uri.getScheme()
                    + "' (its own: kms, jceks, localjceks, user)");
        }
        return KmsGeneration.of(provider);
    }

    private static IOException failed(String what, String key, Exception e) {
        boolean refused = KmsGeneration.refusal(e) != null;
        String more = refused ? "; the KMS refused: encrypt needs GENERATE_EEK and DECRYPT_EEK on the key, decrypt DECRYPT_EEK"
                : "; is the provider reachable?";
        return new IOException("cannot " + what + " the key " + key + " through the --key-provider: " + e.getMessage()
                + more, e);
    }
}
