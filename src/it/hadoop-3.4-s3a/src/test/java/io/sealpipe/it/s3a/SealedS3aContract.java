package io.sealpipe.it.s3a;

import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's FileSystem contract for {@code ss3a} over {@code s3a} against the test class's
 * {@link S3Server}: what SealedFileSystem promises there is in {@value #CONTRACT_XML}. Each test
 * (Hadoop's test base makes a contract per test method) gets a directory of its own in the
 * bucket and a JCEKS keystore with a fresh 256-bit key under {@code target/s3a-contract}, and a
 * SealedFileSystem instance of its own, closed in {@link #teardown()}.
 */
public class SealedS3aContract extends AbstractFSContract {
    public static final String CONTRACT_XML = "contract/sealed-s3a.xml";
    private static final java.nio.file.Path BASE = java.nio.file.Path.of("target", "s3a-contract").toAbsolutePath();

    private java.nio.file.Path dir;
    private FileSystem fs;
    private Path testPath;

    public SealedS3aContract(Configuration conf) {
        super(conf);
        addConfResource(CONTRACT_XML);
    }

    @Override
    public void init() throws IOException {
        super.init();
        Files.createDirectories(BASE);
        dir = Files.createTempDirectory(BASE, "contract-");
        URI keystore = URI.create("jceks://file" + dir.resolve("keys.jceks"));
        S3Files.createKey(keystore, S3Files.KEY);
        Configuration conf = getConf();
        S3Files.configureSealed(conf, S3ServerRule.server(), keystore);
        conf.setBoolean("fs.ss3a.impl.disable.cache", true); // one instance per test, on its keystore
        fs = FileSystem.get(URI.create("ss3a://" + S3Server.BUCKET + "/"), conf);
        if (!(fs instanceof SealedFileSystem)) {
            throw new IllegalStateException("ss3a:// is " + fs.getClass().getName() + ", not SealedFileSystem");
        }
        testPath = fs.makeQualified(new Path("/" + dir.getFileName() + "-" + UUID.randomUUID() + "/test"));
    }

    @Override
    public void teardown() throws IOException {
        try {
            if (fs != null) {
                fs.close();
            }
        } finally {
            super.teardown();
        }
    }

    @Override
    public FileSystem getTestFileSystem() {
        return fs;
    }

    @Override
    public String getScheme() {
        return "ss3a";
    }

    @Override
    public Path getTestPath() {
        return testPath;
    }
}
