package io.sealpipe.it.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's vectored-read contract ({@code AbstractContractVectoredReadTest}) on {@code sfile}
 * over {@code file}, into heap and direct buffers: ranges merged or not, out of order, past the
 * end, overlapping (refused), mixed with ordinary reads.
 */
public class SealedContractVectoredReadTest extends AbstractContractVectoredReadTest {
    public SealedContractVectoredReadTest(String bufferType) {
        super(bufferType);
    }

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedLocalContract(conf);
    }
}
