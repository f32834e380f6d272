package io.sealpipe.it.s3a;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractRenameTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.ContractTestUtils;
import org.junit.ClassRule;

/** Hadoop's RenameTest on {@code ss3a} over S3A: the rename contract (renames are S3A's copies). */
public class SealedS3aContractRenameTest extends AbstractContractRenameTest {
    @ClassRule
    public static final S3ServerRule SERVER = new S3ServerRule();

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new SealedS3aContract(conf);
    }

    /** Skipped: S3A puts the source's files under the destination itself; Hadoop's S3A contract test overrides this too. */
    @Override
    public void testRenameDirIntoExistingDir() {
        ContractTestUtils.skip("S3A (plain, and so sealed) renames a directory into an existing one by putting its"
                + " files under the destination itself, not under destination/source");
    }

    /** Skipped: S3A does not look for a file among the destination's ancestors. */
    @Override
    public void testRenameFileUnderFileSubdir() {
        ContractTestUtils.skip("S3A (plain, and so sealed) renames to a path under a file's subdirectory: it does not"
                + " check the destination's ancestors, as an object store has no directories to check");
    }
}
