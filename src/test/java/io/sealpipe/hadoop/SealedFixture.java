package io.sealpipe.hadoop;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;

/**
 * A sealed local file system for tests: {@code sfile} over {@code file}, keys in a JCEKS
 * keystore file under a test's directory, a 256-bit key named {@code data}.
 */
public final class SealedFixture {
    static final String KEY = "data";

    final Path dir;
    final URI keystore;
    final Configuration conf;

    SealedFixture(Path dir) throws IOException {
        this.dir = dir;
        this.keystore = URI.create("jceks://file" + dir.resolve("keys.jceks").toAbsolutePath());
        this.conf = sealedConf(keystore);
        createKey(keystore, KEY, 256);
    }

    /** sfile over file, the key {@value #KEY} in {@code keystore}, no shared instances. */
    public static Configuration sealedConf(URI keystore) {
        Configuration conf = new Configuration(false);
        conf.set("fs.sfile.impl", SealedFileSystem.class.getName());
        conf.setBoolean("fs.sfile.impl.disable.cache", true);
        conf.set(SealedFileSystem.wrapsKey("sfile"), "file");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, keystore.toString());
        conf.set(SealedFileSystem.KEY_NAME, KEY);
        return conf;
    }

    /** A new key of {@code bits} in the keystore (made if absent). */
    void createKey(String name, int bits) throws IOException {
        createKey(keystore, name, bits);
    }

    public static void createKey(URI keystore, String name, int bits) throws IOException {
        KeyProvider provider = KeyProviderFactory.get(keystore, new Configuration(false));
        try {
            KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
            options.setBitLength(bits);
            options.setCipher("AES/CTR/NoPadding");
            provider.createKey(name, options);
            provider.flush();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IOException(e);
        } finally {
            provider.close();
        }
    }

    /** Rolls {@value #KEY} to a new version, as {@code hadoop key roll} does. */
    void rollKey() throws IOException {
        KeyProvider provider = provider();
        try {
            provider.rollNewVersion(KEY);
            provider.flush();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IOException(e);
        } finally {
            provider.close();
        }
    }

    /** A provider of its own over the keystore, as another process would have. */
    KeyProvider provider() throws IOException {
        return KeyProviderFactory.get(keystore, new Configuration(false));
    }

    FileSystem sealed() throws IOException {
        return FileSystem.get(URI.create("sfile:///"), conf);
    }

    /** The wrapped local file system (Hadoop's LocalFileSystem, with its .crc files). */
    FileSystem local() throws IOException {
        return FileSystem.getLocal(new Configuration(false));
    }

    /** The sealed path of a file in the test's directory. */
    org.apache.hadoop.fs.Path sealedPath(String name) {
        return new org.apache.hadoop.fs.Path("sfile://" + dir.resolve(name).toAbsolutePath());
    }

    /** The same file's stored bytes, in the wrapped file system. */
    org.apache.hadoop.fs.Path storedPath(String name) {
        return new org.apache.hadoop.fs.Path("file://" + dir.resolve(name).toAbsolutePath());
    }

    static byte[] data(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    static void write(FileSystem fs, org.apache.hadoop.fs.Path path, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(path, true)) {
            out.write(data);
        }
    }
}
