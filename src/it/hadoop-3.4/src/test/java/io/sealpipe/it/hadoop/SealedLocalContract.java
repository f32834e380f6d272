package io.sealpipe.it.hadoop;

import io.sealpipe.hadoop.SealedFileSystem;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.security.NoSuchAlgorithmException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's FileSystem contract for {@code sfile} over {@code file}: what SealedFileSystem
 * promises is in {@value #CONTRACT_XML}. Each test (each contract: Hadoop's test base makes one
 * per test method) gets a directory of its own under {@code target/sealed-contract}, holding a
 * JCEKS keystore with a fresh 256-bit key and the test's files under {@code test}, and a
 * SealedFileSystem instance of its own over that keystore (not Hadoop's shared one), closed and
 * the directory deleted in {@link #teardown()}.
 */
public class SealedLocalContract extends AbstractFSContract {
    /** The contract options, as a class path resource. */
    public static final String CONTRACT_XML = "contract/sealed-localfs.xml";
    static final String SCHEME = "sfile";
    static final String KEY = "data";
    private static final java.nio.file.Path BASE = java.nio.file.Path.of("target", "sealed-contract").toAbsolutePath();

    private java.nio.file.Path dir;
    private FileSystem fs;

    public SealedLocalContract(Configuration conf) {
        super(conf);
        addConfResource(CONTRACT_XML);
    }

    /** Makes the directory and its keystore, then the sealed file system over them. */
    @Override
    public void init() throws IOException {
        super.init();
        Files.createDirectories(BASE);
        dir = Files.createTempDirectory(BASE, "contract-");
        URI keystore = URI.create("jceks://file" + dir.resolve("keys.jceks"));
        createKey(keystore, KEY);
        Configuration conf = getConf();
        conf.set("fs." + SCHEME + ".impl", SealedFileSystem.class.getName());
        conf.setBoolean("fs." + SCHEME + ".impl.disable.cache", true); // one instance per test, on its keystore
        conf.set(SealedFileSystem.wrapsKey(SCHEME), "file");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, keystore.toString());
        conf.set(SealedFileSystem.KEY_NAME, KEY);
        fs = FileSystem.get(URI.create(SCHEME + ":///"), conf);
        if (!(fs instanceof SealedFileSystem)) {
            throw new IllegalStateException(SCHEME + ":/// is " + fs.getClass().getName() + ", not SealedFileSystem");
        }
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

    /** Closes the sealed file system (destroying its keys) and deletes the directory. */
    @Override
    public void teardown() throws IOException {
        try {
            if (fs != null) {
                fs.close();
            }
        } finally {
            super.teardown();
            if (dir != null) {
                TestFiles.deleteRecursively(dir);
            }
        }
    }

    @Override
    public FileSystem getTestFileSystem() {
        return fs;
    }

    @Override
    public String getScheme() {
        return SCHEME;
    }

    /** The directory's {@code test}, beside (not above) the keystore: listings see test files only. */
    @Override
    public Path getTestPath() {
        return fs.makeQualified(new Path(dir.resolve("test").toUri().getPath()));
    }
}
