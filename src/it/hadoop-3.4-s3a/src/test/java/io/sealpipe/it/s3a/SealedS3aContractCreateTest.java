package io.sealpipe.it.s3a;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractCreateTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/** Hadoop's CreateTest on {@code ss3a} over S3A: the create contract: files appear when closed, overwrite, create over a directory or under a file, and the stream's capabilities. */
public class SealedS3aContractCreateTest extends AbstractContractCreateTest {
    @ClassRule
    public static final S3ServerRule SERVER = new S3ServerRule();

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedS3aContract(conf);
    }
}
