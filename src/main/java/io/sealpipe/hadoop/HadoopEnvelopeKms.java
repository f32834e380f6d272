package io.sealpipe.hadoop;

import io.sealpipe.internal.hadoop.EnvelopeKeys;
import io.sealpipe.internal.hadoop.KmsGeneration;
import io.sealpipe.internal.hadoop.SealedKeys;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProvider.KeyVersion;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension.EncryptedKeyVersion;
import org.apache.hadoop.security.AccessControlException;

/**
 * Envelope keys from a Hadoop {@link KeyProviderCryptoExtension}, the provider at {@code
 * sealpipe.fs.key.provider.path}: with {@code kms://} Hadoop's KMS protocol ({@code GENERATE_EEK},
 * {@code DECRYPT_EEK}, {@code REENCRYPT_EEK}, one request each, past the queue of wrapped keys
 * that Hadoop's client fills in the background: {@link KmsGeneration}); with a keystore ({@code
 * jceks://}) Hadoop's default extension does the same locally. The envelope's kind is {@value
 * #KIND}; its version is the key version that wrapped the data key, its IV the wrapping's IV.
 */
@SuppressWarnings("exports") // Hadoop's types in this API: module-info.java says why they are not "requires transitive"
public final class HadoopEnvelopeKms implements EnvelopeKms {
    /** The envelope kind of a data key wrapped by a Hadoop key provider. */
    public static final int KIND = io.sealpipe.internal.Envelope.KIND_HADOOP;

    private final KeyProviderCryptoExtension extension;
    private final String location;

    /**
     * The provider at {@code sealpipe.fs.key.provider.path} in {@code conf}; asks it nothing yet.
     *
     * @param conf the file system's configuration
     * @throws IOException if the provider cannot be made
     */
    public HadoopEnvelopeKms(Configuration conf) throws IOException {
        this(conf, SealedKeys.required(conf, SealedFileSystem.KEY_PROVIDER_PATH, "the URI of the Hadoop KeyProvider that"
                + " wraps the data keys, such as kms://http@kms:9600/kms"));
    }

    private HadoopEnvelopeKms(Configuration conf, String path) throws IOException {
        this(extension(conf, path), path);
    }

    /** Sealpipe's extension over the provider at {@code path}: one wrapped key per request. */
    private static KeyProviderCryptoExtension extension(Configuration conf, String path) throws IOException {
        KeyProvider provider = SealedKeys.newProvider(EnvelopeKeys.kmsClientConfiguration(conf), path);
        try {
            return KmsGeneration.of(provider);
        } catch (RuntimeException | Error e) {
            provider.close();
            throw e;
        }
    }

    /** Over {@code extension} (for tests: one that counts or refuses), at {@code location}. */
    HadoopEnvelopeKms(KeyProviderCryptoExtension extension, String location) {
        this.extension = extension;
        this.location = location;
    }

    @Override
    public int kind() {
        return KIND;
    }

    @Override
    public String location() {
        return location;
    }

    @Override
    public String refusalAdvice() {
        return "a writer needs GENERATE_EEK and DECRYPT_EEK on the key, a reader DECRYPT_EEK"
                + " (docs/sealed-files.md, \"Keys in a KMS\")";
    }

    /** A {@code GENERATE_EEK}: the wrapped form only (the file system unwraps it, a {@code DECRYPT_EEK}). */
    @Override
    public DataKey generate(String keyName) throws IOException {
        EncryptedKeyVersion made = call(() -> extension.generateEncryptedKey(keyName));
        return new DataKey(wrapped(keyName, made, "generation of a data key"), null);
    }

    /** A {@code DECRYPT_EEK}; zeroes the array the provider handed out once copied. */
    @Override
    public byte[] unwrap(WrappedKey wrapped) throws IOException {
        KeyVersion unwrapped = call(() -> extension.decryptEncryptedKey(forKms(wrapped)));
        byte[] material = unwrapped == null ? null : unwrapped.getMaterial();
        if (material == null) {
            return new byte[0];
        }
        byte[] copy = material.clone();
        Arrays.fill(material, (byte) 0);
        return copy;
    }

    /** A {@code REENCRYPT_EEK}: wrapped again under the key's current version. */
    @Override
    public WrappedKey rewrap(WrappedKey wrapped) throws IOException {
        EncryptedKeyVersion again = call(() -> extension.reencryptEncryptedKey(forKms(wrapped)));
        return wrapped(wrapped.keyName(), again, "rewrap of a data key");
    }

    /** The wrapped key in the provider's answer to {@code what}, which must hold one. */
    private WrappedKey wrapped(String keyName, EncryptedKeyVersion answer, String what) throws IOException {
        if (answer == null || answer.getEncryptedKeyVersion() == null || answer.getEncryptedKeyVersion().getMaterial() == null
                || answer.getEncryptionKeyVersionName() == null) {
            throw new IOException("the KMS " + location + " answered the " + what + " under '" + keyName
                    + "' with no wrapped key: check that " + SealedFileSystem.KEY_PROVIDER_PATH + " names a KMS");
        }
        return new WrappedKey(keyName, answer.getEncryptionKeyVersionName(),
                answer.getEncryptedKeyIv() == null ? new byte[0] : answer.getEncryptedKeyIv(),
                answer.getEncryptedKeyVersion().getMaterial());
    }

    private static EncryptedKeyVersion forKms(WrappedKey wrapped) {
        return EncryptedKeyVersion.createForDecryption(wrapped.keyName(), wrapped.versionName(), wrapped.iv(),
                wrapped.wrapped());
    }

    /** One call of the extension's. */
    private interface Call<T> {
        T run() throws IOException, GeneralSecurityException;
    }

    /** {@code call}, its failures as IOExceptions, a refusal as an {@link AccessControlException}. */
    private static <T> T call(Call<T> call) throws IOException {
        try {
            return call.run();
        } catch (GeneralSecurityException | RuntimeException e) {
            throw refusalOr(new IOException(e));
        } catch (IOException e) {
            throw refusalOr(e);
        }
    }

    /** A refusal found in {@code e}'s causes (a 403 from a KMS) as an {@link AccessControlException}; else {@code e}. */
    private static IOException refusalOr(IOException e) {
        AccessControlException refusal = KmsGeneration.refusal(e);
        if (refusal == null || refusal == e) {
            return e;
        }
        AccessControlException denied = new AccessControlException(refusal.getMessage());
        denied.initCause(e);
        return denied;
    }

    @Override
    public void close() throws IOException {
        extension.close();
    }

    @Override
    public String toString() {
        return "HadoopEnvelopeKms(" + location + ")";
    }
}
