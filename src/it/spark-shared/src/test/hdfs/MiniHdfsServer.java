import java.io.File;
import java.io.PrintStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.client.HdfsClientConfigKeys;

/**
 * A MiniDFSCluster (one NameNode, one DataNode, one replica, every address on 127.0.0.1) in a
 * JVM of its own, for the Spark projects' tests (io.sealpipe.it.spark.Hdfs), whose Hadoop client
 * cannot share a class path with Hadoop 3.4.1's servers. Run as a single-file program: {@code
 * java -cp <hdfs.classpath> MiniHdfsServer.java <base dir>}. It prints the cluster's URI as one
 * line on standard output once the DataNode has registered, then serves until standard input
 * ends (its parent closed the pipe, or died), shuts the cluster down and exits 0.
 *
 * <p>Configured as hadoop-3.4's {@code MiniHdfs}: a client asks again after 10 ms, not Hadoop's
 * 400, whether the file it closes is complete (the DataNode's report comes within milliseconds
 * on one host).
 */
public final class MiniHdfsServer {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: MiniHdfsServer <base dir>, not " + String.join(" ", args));
        }
        PrintStream out = System.out;
        // Hadoop's own output goes to its log; standard output carries the URI alone.
        System.setOut(System.err);
        Configuration conf = new HdfsConfiguration();
        conf.setInt(DFSConfigKeys.DFS_REPLICATION_KEY, 1);
        conf.setInt(HdfsClientConfigKeys.BlockWrite.LOCATEFOLLOWINGBLOCK_INITIAL_DELAY_MS_KEY, 10);
        conf.setInt(HdfsClientConfigKeys.BlockWrite.LOCATEFOLLOWINGBLOCK_RETRIES_KEY, 12);
        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, new File(args[0])).numDataNodes(1).build();
        try {
            cluster.waitActive();
            out.println(cluster.getURI());
            out.flush();
            while (System.in.read() >= 0) {
                // serve until the parent closes the pipe
            }
        } finally {
            cluster.shutdown();
        }
    }
}
