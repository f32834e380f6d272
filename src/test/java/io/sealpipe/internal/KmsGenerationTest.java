package io.sealpipe.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension.EncryptedKeyVersion;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crypto extension whose generation costs one KMS request: made for Hadoop's KMS client
 * (which proves that the Hadoop on the class path still has the fields it reaches), not for a
 * keystore. Its requests against real KMS servers (one request per data key, counted by the
 * KMS's meters; several hosts) are src/it/hadoop-3.4's {@code KmsEnvelopeAclTest}.
 */
class KmsGenerationTest {
    @Test
    void hadoopsKmsClientOfSeveralHostsIsGeneratedForPastItsQueue() throws Exception {
        KeyProvider kms = KeyProviderFactory.get(URI.create("kms://http@127.0.0.1;localhost:9600/kms"),
                new Configuration(false));
        try (KeyProviderCryptoExtension extension = KmsGeneration.of(kms)) {
            assertInstanceOf(KmsGeneration.class, extension);
        }
    }

    @Test
    void aKeystoreKeepsHadoopsOwnExtension(@TempDir Path dir) throws Exception {
        URI keystore = URI.create("jceks://file" + dir.resolve("keys.jceks").toAbsolutePath());
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
        options.setBitLength(256);
        provider.createKey("data", options);
        provider.flush();
        try (KeyProviderCryptoExtension extension = KmsGeneration.of(provider)) {
            assertFalse(extension instanceof KmsGeneration, extension::toString);
            EncryptedKeyVersion wrapped = extension.generateEncryptedKey("data");
            byte[] key = extension.decryptEncryptedKey(wrapped).getMaterial();
            assertEquals(32, key.length);
            assertArrayEquals(key, extension.decryptEncryptedKey(wrapped).getMaterial());
        }
    }

    /** Every host is asked once, in turn; the failure names each (the first, the others suppressed). */
    @Test
    void everyHostIsTriedOnceAndEachFailureReported() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closed = socket.getLocalPort();
        }
        KeyProvider kms = KeyProviderFactory.get(URI.create("kms://http@127.0.0.1;localhost:" + closed + "/kms"),
                new Configuration(false));
        try (KeyProviderCryptoExtension extension = KmsGeneration.of(kms)) {
            IOException failed = assertThrows(IOException.class, () -> extension.generateEncryptedKey("data"));
            List<String> messages = new ArrayList<>();
            messages.add(failed.getMessage());
            for (Throwable other : failed.getSuppressed()) {
                messages.add(other.getMessage());
            }
            assertEquals(2, messages.size(), messages::toString);
            assertTrue(messages.stream().anyMatch(m -> m.contains("//127.0.0.1:" + closed + "/")), messages::toString);
            assertTrue(messages.stream().anyMatch(m -> m.contains("//localhost:" + closed + "/")), messages::toString);
        }
    }
}
