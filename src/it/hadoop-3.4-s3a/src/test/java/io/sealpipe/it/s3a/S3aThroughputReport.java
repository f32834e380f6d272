package io.sealpipe.it.s3a;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Sequential write and read of one 256 MiB object through S3Proxy, plain S3A against the sealed
 * view, side by side in one JVM: rounds alternate plain and sealed, and the report gives each
 * round's MB/s and the median ratios. A measurement, not a test: it asserts only that the bytes
 * read back are the bytes written, and runs only when asked for:
 * {@code cd target/it/hadoop-3.4-s3a && mvn -B -ntp test -Dtest=S3aThroughputReport
 * -Dsealpipe.it.report=true -Dtest.heap=6g} (S3Proxy keeps the objects in the test JVM). The report goes to {@code target/s3a-throughput.txt}.
 */
@EnabledIfSystemProperty(named = "sealpipe.it.report", matches = "true")
class S3aThroughputReport {
    private static final int MIB = 1 << 20;
    private static final int SIZE = 256 * MIB;
    private static final int ROUNDS = Integer.getInteger("sealpipe.it.rounds", 5);

    @Test
    void sealedAgainstPlainS3a() throws Exception {
        try (S3Server server = S3Server.start()) {
            Configuration conf = S3Files.sealedConf(server, "s3a-throughput");
            byte[] block = new byte[MIB];
            new Random(1).nextBytes(block);
            List<String> report = new ArrayList<>();
            double[] writeRatio = new double[ROUNDS];
            double[] readRatio = new double[ROUNDS];
            try (FileSystem sealed = FileSystem.newInstance(URI.create("ss3a://" + S3Server.BUCKET + "/"), conf);
                    FileSystem plain = FileSystem.newInstance(URI.create("s3a://" + S3Server.BUCKET + "/"), conf)) {
                for (int round = -1; round < ROUNDS; round++) { // round -1 warms both up and is not reported
                    double[] p = writeAndRead(plain, new Path("s3a://" + S3Server.BUCKET + "/plain.bin"), block);
                    double[] s = writeAndRead(sealed, new Path("ss3a://" + S3Server.BUCKET + "/sealed.bin"), block);
                    if (round >= 0) {
                        writeRatio[round] = s[0] / p[0];
                        readRatio[round] = s[1] / p[1];
                        report.add(String.format("round %d: write plain %.0f MB/s, sealed %.0f MB/s (%.2f); read plain %.0f MB/s,"
                                + " sealed %.0f MB/s (%.2f)", round, p[0], s[0], writeRatio[round], p[1], s[1], readRatio[round]));
                    }
                }
            }
            report.add(String.format("median sealed/plain: write %.2f, read %.2f (%d rounds of %d MiB)", median(writeRatio),
                    median(readRatio), ROUNDS, SIZE / MIB));
            Files.write(java.nio.file.Path.of("target", "s3a-throughput.txt"), report);
            report.forEach(System.out::println);
        }
    }

    /** MB/s of writing then reading {@code path} ({@value #SIZE} bytes in 1 MiB calls). */
    private static double[] writeAndRead(FileSystem fs, Path path, byte[] block) throws IOException {
        long start = System.nanoTime();
        try (FSDataOutputStream out = fs.create(path, true)) {
            for (int i = 0; i < SIZE / MIB; i++) {
                out.write(block);
            }
        }
        long written = System.nanoTime();
        byte[] buffer = new byte[MIB];
        try (FSDataInputStream in = fs.open(path)) {
            for (int i = 0; i < SIZE / MIB; i++) {
                in.readFully(buffer);
                if (i == 0) {
                    assertArrayEquals(block, buffer, "the bytes written");
                }
            }
        }
        long read = System.nanoTime();
        return new double[] {SIZE / 1e6 / ((written - start) / 1e9), SIZE / 1e6 / ((read - written) / 1e9)};
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
