package io.sealpipe.it.s3a;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractSeekTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/** Hadoop's SeekTest on {@code ss3a} over S3A: the seek contract: seeks, reads at and past the end, positioned reads, readFully past the end, a closed stream, random seeks. */
public class SealedS3aContractSeekTest extends AbstractContractSeekTest {
    @ClassRule
    public static final S3ServerRule SERVER = new S3ServerRule();

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedS3aContract(conf);
    }
}
