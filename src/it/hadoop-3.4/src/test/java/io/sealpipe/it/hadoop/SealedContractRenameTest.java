package io.sealpipe.it.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractRenameTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's rename contract ({@code AbstractContractRenameTest}) on {@code sfile} over {@code
 * file}: files and directories renamed in and across directories, over existing files, into
 * missing parents and under files, and still readable after.
 */
public class SealedContractRenameTest extends AbstractContractRenameTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedLocalContract(conf);
    }
}
