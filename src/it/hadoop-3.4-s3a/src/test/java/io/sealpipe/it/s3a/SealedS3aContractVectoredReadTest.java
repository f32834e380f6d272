package io.sealpipe.it.s3a;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/**
 * Hadoop's vectored-read contract on {@code ss3a} over S3A, into heap and direct buffers:
 * SealedInputStream's {@code readVectored} reads the chunks of the ranges with S3A's own.
 */
public class SealedS3aContractVectoredReadTest extends AbstractContractVectoredReadTest {
    @ClassRule
    public static final S3ServerRule SERVER = new S3ServerRule();

    public SealedS3aContractVectoredReadTest(String bufferType) {
        super(bufferType);
    }

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedS3aContract(conf);
    }
}
