package io.sealpipe.it.s3a;

import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.net.URI;
import java.security.NoSuchAlgorithmException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;

/** The sealed file system's settings over S3A, and its keys, for the tests. */
final class S3Files {
    static final String KEY = "data";

    private S3Files() {
    }

    /**
     * S3A for {@code server}, and {@code ss3a} as the sealed view of {@code s3a} with the key
     * {@value #KEY} from {@code keystore}: the configuration docs/sealed-files.md gives.
     */
    static void configureSealed(Configuration conf, S3Server server, URI keystore) {
        server.configure(conf);
        conf.set("fs.ss3a.impl", SealedFileSystem.class.getName());
        conf.set(SealedFileSystem.wrapsKey("ss3a"), "s3a");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, keystore.toString());
        conf.set(SealedFileSystem.KEY_NAME, KEY);
    }

    /**
     * A configuration for {@code server} with {@code ss3a} over {@code s3a}, its key a fresh
     * 256-bit {@value #KEY} in a new keystore under {@code target/<dirName>} (that directory is
     * made if missing, and the keystore replaced).
     */
    static Configuration sealedConf(S3Server server, String dirName) throws IOException {
        java.nio.file.Path dir = java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", dirName).toAbsolutePath());
        java.nio.file.Files.deleteIfExists(dir.resolve("keys.jceks"));
        URI keystore = URI.create("jceks://file" + dir.resolve("keys.jceks"));
        createKey(keystore, KEY);
        Configuration conf = new Configuration();
        configureSealed(conf, server, keystore);
        return conf;
    }

    /** A new 256-bit key {@code name} in the keystore at {@code keystore}, as {@code hadoop key create} makes. */
    static void createKey(URI keystore, String name) throws IOException {
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        try {
            KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
            options.setBitLength(256);
            options.setCipher("AES/CTR/NoPadding");
            provider.createKey(name, options);
            provider.flush();
        } catch (NoSuchAlgorithmException e) {
            throw new IOException(e);
        } finally {
            provider.close();
        }
    }

    /** Deletes a local directory tree, if there is one. */
    static void deleteTree(java.nio.file.Path dir) throws IOException {
        if (!java.nio.file.Files.exists(dir)) {
            return;
        }
        try (var paths = java.nio.file.Files.walk(dir)) {
            for (java.nio.file.Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.delete(p);
            }
        }
    }
}
