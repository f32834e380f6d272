package io.sealpipe.it.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractDeleteTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's delete contract ({@code AbstractContractDeleteTest}) on {@code sfile} over {@code
 * file}: files, empty and non-empty directories, recursive or not, and missing paths.
 */
public class SealedContractDeleteTest extends AbstractContractDeleteTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedLocalContract(conf);
    }
}
