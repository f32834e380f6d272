package io.sealpipe.it.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.client.HdfsClientConfigKeys;

/** The configuration of the tests' MiniDFSClusters (one NameNode, one DataNode) and of their clients. */
final class MiniHdfs {
    /**
     * A client that closes a file, or adds a block to it, asks the NameNode to complete the last
     * block; if the DataNode's report of that block has not arrived yet, the client sleeps and
     * asks again, first after 400 ms, doubling each time. On one host the report comes within
     * milliseconds, so with Hadoop's default about every other small file written cost 400 ms of
     * sleep (200 files of DistCp's test: a minute). Here the first wait is 10 ms, and the
     * retries are more, so that a client still waits 40 s in all before it gives up.
     */
    private static final int FIRST_COMPLETE_RETRY_MS = 10;
    private static final int COMPLETE_RETRIES = 12;

    private MiniHdfs() {}

    /** A cluster's configuration: blocks of {@code blockSize}, one replica, a file's close retried soon. */
    static Configuration conf(long blockSize) {
        Configuration conf = new HdfsConfiguration();
        conf.setLong(DFSConfigKeys.DFS_BLOCK_SIZE_KEY, blockSize);
        conf.setInt(DFSConfigKeys.DFS_REPLICATION_KEY, 1);
        conf.setInt(HdfsClientConfigKeys.BlockWrite.LOCATEFOLLOWINGBLOCK_INITIAL_DELAY_MS_KEY, FIRST_COMPLETE_RETRY_MS);
        conf.setInt(HdfsClientConfigKeys.BlockWrite.LOCATEFOLLOWINGBLOCK_RETRIES_KEY, COMPLETE_RETRIES);
        return conf;
    }
}
