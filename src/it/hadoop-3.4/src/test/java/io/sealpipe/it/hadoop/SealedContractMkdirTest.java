package io.sealpipe.it.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractMkdirTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's mkdir contract ({@code AbstractContractMkdirTest}) on {@code sfile} over {@code
 * file}: directories made with their parents, refused over and under files, slashes handled.
 */
public class SealedContractMkdirTest extends AbstractContractMkdirTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedLocalContract(conf);
    }
}
