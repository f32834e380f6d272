package io.sealpipe.internal.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
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
    void hadoopsKmsClientOfSeveralHostsGetsKmsGeneration() throws Exception {
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

    /**
     * Hadoop's client's failover, from its settings: by default each host, then one more try after
     * a pause (its {@code max.retries} is the number of hosts); with {@code max.retries=0} each host
     * once. The failure names every try: the first, the others suppressed.
     */
    @Test
    void theHostsAreTriedAsHadoopsClientTriesThemAndEachFailureReported() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = socket.getLocalPort();
        }
        URI twoDown = URI.create("kms://http@127.0.0.1;localhost:" + closed + "/kms");
        Configuration conf = new Configuration(false);
        conf.setInt("hadoop.security.kms.client.failover.sleep.base.millis", 1);
        List<String> tries = failures(twoDown, conf);
        assertEquals(3, tries.size(), tries::toString);
        assertTrue(tries.stream().anyMatch(m -> m.contains("//127.0.0.1:" + closed + "/")), tries::toString);
        assertTrue(tries.stream().anyMatch(m -> m.contains("//localhost:" + closed + "/")), tries::toString);
        assertEquals(tries.get(0), tries.get(2), "the third try is the first host's again");

        conf.setInt("hadoop.security.kms.client.failover.max.retries", 0);
        tries = failures(twoDown, conf);
        assertEquals(2, tries.size(), tries::toString);
        assertNotEquals(tries.get(0), tries.get(1), tries::toString);
    }

    /** The messages of the failure to generate through {@code uri}: the first try's, then the others'. */
    private static List<String> failures(URI uri, Configuration conf) throws IOException {
        try (KeyProviderCryptoExtension extension = KmsGeneration.of(KeyProviderFactory.get(uri, conf))) {
            assertInstanceOf(KmsGeneration.class, extension);
            IOException failed = assertThrows(IOException.class, () -> extension.generateEncryptedKey("data"));
            List<String> messages = new ArrayList<>();
            messages.add(failed.getMessage());
            for (Throwable other : failed.getSuppressed()) {
                messages.add(other.getMessage());
            }
            return messages;
        }
    }
}
