package io.sealpipe.it.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractSeekTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's seek contract ({@code AbstractContractSeekTest}) on {@code sfile} over {@code file}:
 * seeks, reads at and past the end, positioned reads that leave the position alone, {@code
 * readFully} past the end, a closed stream, and random seeks over a file of several chunks.
 */
public class SealedContractSeekTest extends AbstractContractSeekTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedLocalContract(conf);
    }
}
