package io.sealpipe.it.s3a;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractDeleteTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/** Hadoop's DeleteTest on {@code ss3a} over S3A: the delete contract. */
public class SealedS3aContractDeleteTest extends AbstractContractDeleteTest {
    @ClassRule
    public static final S3ServerRule SERVER = new S3ServerRule();

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedS3aContract(conf);
    }
}
