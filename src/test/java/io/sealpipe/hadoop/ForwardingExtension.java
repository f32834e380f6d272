package io.sealpipe.hadoop;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.util.List;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProvider.KeyVersion;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension.EncryptedKeyVersion;

/**
 * A {@code KeyProviderCryptoExtension} for tests: every call goes to {@code real} (a keystore's
 * default extension), except what a subclass overrides in its {@link Calls}, to count, block or
 * refuse calls as a KMS would.
 */
final class ForwardingExtension {
    private ForwardingExtension() {}

    /** The calls a test may change: by default those of {@code real}. */
    abstract static class Calls implements KeyProviderCryptoExtension.CryptoExtension {
        final KeyProviderCryptoExtension real;

        Calls(KeyProviderCryptoExtension real) {
            this.real = real;
        }

        @Override
        public void warmUpEncryptedKeys(String... names) {
        }

        @Override
        public void drain(String name) {
        }

        @Override
        public EncryptedKeyVersion generateEncryptedKey(String name) throws IOException, GeneralSecurityException {
            return real.generateEncryptedKey(name);
        }

        @Override
        public KeyVersion decryptEncryptedKey(EncryptedKeyVersion eek) throws IOException, GeneralSecurityException {
            return real.decryptEncryptedKey(eek);
        }

        @Override
        public EncryptedKeyVersion reencryptEncryptedKey(EncryptedKeyVersion eek)
                throws IOException, GeneralSecurityException {
            return real.reencryptEncryptedKey(eek);
        }

        @Override
        public void reencryptEncryptedKeys(List<EncryptedKeyVersion> eeks) throws IOException, GeneralSecurityException {
            real.reencryptEncryptedKeys(eeks);
        }
    }

    /** An extension over {@code provider} whose calls are {@code calls}'. */
    static KeyProviderCryptoExtension of(KeyProvider provider, Calls calls) {
        return new KeyProviderCryptoExtension(provider, calls) {
        };
    }
}
