package io.sealpipe.it.s3a;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractMkdirTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/** Hadoop's MkdirTest on {@code ss3a} over S3A: the mkdir contract. */
public class SealedS3aContractMkdirTest extends AbstractContractMkdirTest {
    @ClassRule
    public static final S3ServerRule SERVER = new S3ServerRule();

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedS3aContract(conf);
    }
}
