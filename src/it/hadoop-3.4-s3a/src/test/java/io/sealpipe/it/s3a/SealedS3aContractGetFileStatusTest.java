package io.sealpipe.it.s3a;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractGetFileStatusTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/** Hadoop's GetFileStatusTest on {@code ss3a} over S3A: the getFileStatus and listing contract (listStatus, listFiles, listLocatedStatus, globs): plaintext lengths from the stored lengths. */
public class SealedS3aContractGetFileStatusTest extends AbstractContractGetFileStatusTest {
    @ClassRule
    public static final S3ServerRule SERVER = new S3ServerRule();

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedS3aContract(conf);
    }
}
