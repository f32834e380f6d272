package io.sealpipe.cli;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;

/**
 * A JCEKS keystore with a 256-bit key {@code data} for the CLI's envelope tests (Hadoop's default
 * crypto extension wraps data keys with it, as a KMS would), and the sealed file system over it in
 * envelope mode.
 */
final class EnvelopeFixture {
    private EnvelopeFixture() {}

    /** A keystore in {@code dir} holding the key {@code data}; its provider URI. */
    static URI keystoreWithKey(Path dir) throws IOException {
        URI keystore = URI.create("jceks://file" + dir.resolve("keys.jceks").toAbsolutePath());
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        try {
            KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
            options.setBitLength(256);
            provider.createKey("data", options);
            provider.flush();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IOException(e);
        } finally {
            provider.close();
        }
        return keystore;
    }

    /** Rolls {@code data} to a new version, as {@code hadoop key roll} does. */
    static void roll(URI keystore) throws IOException {
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        try {
            provider.rollNewVersion("data");
            provider.flush();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IOException(e);
        } finally {
            provider.close();
        }
    }

    /** {@code sfile} over {@code file} in envelope mode, the key {@code data} in {@code keystore}, no shared instances. */
    static Configuration sealedConf(URI keystore) {
        Configuration conf = new Configuration(false);
        conf.set("fs.sfile.impl", "io.sealpipe.hadoop.SealedFileSystem");
        conf.setBoolean("fs.sfile.impl.disable.cache", true);
        conf.set("sealpipe.fs.sfile.wraps", "file");
        conf.set("sealpipe.fs.key.provider.path", keystore.toString());
        conf.set("sealpipe.fs.key.name", "data");
        conf.set("sealpipe.fs.key.mode", "envelope");
        return conf;
    }
}
