package io.sealpipe.it.s3a;

import static org.apache.parquet.filter2.predicate.FilterApi.and;
import static org.apache.parquet.filter2.predicate.FilterApi.gtEq;
import static org.apache.parquet.filter2.predicate.FilterApi.longColumn;
import static org.apache.parquet.filter2.predicate.FilterApi.lt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.statistics.IOStatisticsSnapshot;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Parquet data set (Parquet 1.15, as Spark 4.0 reads it: footers and column chunks through
 * {@code readVectored}) written to plain S3A and to {@code ss3a}, then read with a filter on a
 * sorted column and a projection of two of five columns: the same rows, and the S3 requests and
 * bytes of the sealed read against the plain one, counted by S3A's own statistics on one
 * instance. Targets (issue 28): GET requests at most 1.25 times plain's, bytes fetched at most
 * 1.3 times, HEAD requests equal. The figures go to {@code target/s3a-parquet.txt}.
 */
class SealedParquetS3aTest {
    private static final MessageType SCHEMA = MessageTypeParser.parseMessageType("message row {"
            + " required int64 id; required binary category (UTF8); required double amount;"
            + " required binary note (UTF8); required int32 flags; }");
    private static final MessageType PROJECTION = MessageTypeParser.parseMessageType("message row {"
            + " required int64 id; required double amount; }");
    private static final int FILES = 6;
    private static final int ROWS = 150_000;

    private static S3Server server;
    private static FileSystem sealed;
    private static FileSystem s3a;
    private static Configuration conf;

    @BeforeAll
    static void start() throws Exception {
        server = S3Server.start();
        Files.deleteIfExists(java.nio.file.Path.of("target", "s3a-parquet.txt"));
        conf = S3Files.sealedConf(server, "sealed-parquet");
        // Parquet 1.15 calls hflush() when it closes a file (docs/sealed-files.md, "Parquet").
        conf.setBoolean(SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS, true);
        // Hadoop's shared instances, as Parquet gets them from the paths: the sealed one wraps the
        // shared S3A instance, whose statistics count the requests of both reads.
        sealed = FileSystem.get(URI.create("ss3a://" + S3Server.BUCKET + "/"), conf);
        s3a = ((SealedFileSystem) sealed).getWrappedFileSystem();
        for (int f = 0; f < FILES; f++) {
            write(new Path("s3a://" + S3Server.BUCKET + "/plain/part-" + f + ".parquet"), f);
            write(new Path("ss3a://" + S3Server.BUCKET + "/sealed/part-" + f + ".parquet"), f);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (sealed != null) {
                sealed.close();
            }
            FileSystem.closeAll();
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    /** One file of {@value #ROWS} rows sorted by id, in row groups of 1 MiB, Snappy-compressed as Spark writes. */
    private static void write(Path path, int file) throws IOException {
        Random random = new Random(file);
        SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
        try (ParquetWriter<Group> writer = ExampleParquetWriter.builder(path).withConf(conf).withType(SCHEMA)
                .withRowGroupSize(1L << 20).withCompressionCodec(CompressionCodecName.SNAPPY).build()) {
            for (int i = 0; i < ROWS; i++) {
                long id = (long) file * ROWS + i;
                writer.write(groups.newGroup().append("id", id).append("category", "c" + random.nextInt(20))
                        .append("amount", random.nextDouble() * 1000).append("note", Long.toString(random.nextLong(), 36)
                                + Long.toString(random.nextLong(), 36))
                        .append("flags", random.nextInt()));
            }
        }
    }

    /**
     * Reads every file with the filter and projection, with Parquet's vectored reads or without;
     * returns the rows read and the sum of their amounts.
     */
    private static double[] read(String dir, boolean vectored) throws IOException {
        long rows = 0;
        double sum = 0;
        Configuration readConf = new Configuration(conf);
        readConf.set("parquet.read.schema", PROJECTION.toString());
        readConf.setBoolean("parquet.hadoop.vectored.io.enabled", vectored);
        for (int f = 0; f < FILES; f++) {
            long from = (long) f * ROWS + ROWS / 2; // a tenth of each file, in its middle
            FilterCompat.Filter filter = FilterCompat.get(and(gtEq(longColumn("id"), from), lt(longColumn("id"), from + ROWS / 10)));
            try (ParquetReader<Group> reader = ParquetReader.builder(new GroupReadSupport(),
                    new Path(dir + "/part-" + f + ".parquet")).withConf(readConf).withFilter(filter).build()) {
                for (Group g; (g = reader.read()) != null; ) {
                    rows++;
                    sum += g.getDouble("amount", 0);
                }
            }
        }
        return new double[] {rows, sum};
    }

    @ParameterizedTest(name = "Parquet vectored reads: {0}")
    @ValueSource(booleans = {false, true})
    void aFilteredProjectedReadCostsAboutThePlainRequests(boolean vectored) throws IOException {
        IOStatisticsSnapshot before = Requests.snapshot(s3a);
        double[] plainRows = read("s3a://" + S3Server.BUCKET + "/plain", vectored);
        Requests plain = Requests.since(s3a, before);
        long plainVectored = vectoredReads(before);
        before = Requests.snapshot(s3a);
        double[] sealedRows = read("ss3a://" + S3Server.BUCKET + "/sealed", vectored);
        Requests sealedRequests = Requests.since(s3a, before);
        long sealedVectored = vectoredReads(before);

        assertEquals(FILES * (ROWS / 10), (long) plainRows[0], "rows of the plain read");
        assertEquals(plainRows[0], sealedRows[0], "rows");
        assertEquals(plainRows[1], sealedRows[1], 1e-6, "the sum of the amounts");
        if (vectored) {
            assertTrue(plainVectored > 0 && sealedVectored > 0, "S3A's readVectored served both reads: plain "
                    + plainVectored + ", sealed " + sealedVectored);
        }
        List<String> report = new ArrayList<>();
        report.add(String.format("Parquet %s%s: %d files of %d rows (%d bytes), a tenth of each file's ids, 2 of 5 columns",
                org.apache.parquet.Version.VERSION_NUMBER, vectored ? ", vectored reads (S3A readVectored calls: plain "
                        + plainVectored + ", sealed " + sealedVectored + ")" : "", FILES, ROWS, plainSize()));
        report.add("  plain:  " + plain);
        report.add("  sealed: " + sealedRequests);
        report.add(String.format("  sealed/plain: GET %.2f, bytes %.2f, HEAD %d/%d", (double) sealedRequests.get() / plain.get(),
                (double) sealedRequests.bytesFetched() / plain.bytesFetched(), sealedRequests.head(), plain.head()));
        Files.write(java.nio.file.Path.of("target", "s3a-parquet.txt"), report, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
        report.forEach(System.out::println);
        assertEquals(plain.head(), sealedRequests.head(), "HEAD requests: " + report);
        assertTrue(sealedRequests.get() <= 1.25 * plain.get(), "GET requests: " + report);
        assertTrue(sealedRequests.bytesFetched() <= 1.3 * plain.bytesFetched(), "bytes fetched: " + report);
    }

    private static long vectoredReads(IOStatisticsSnapshot before) {
        return Requests.snapshot(s3a).counters().getOrDefault(StreamStatisticNames.STREAM_READ_VECTORED_OPERATIONS, 0L)
                - before.counters().getOrDefault(StreamStatisticNames.STREAM_READ_VECTORED_OPERATIONS, 0L);
    }

    private static long plainSize() throws IOException {
        long size = 0;
        for (var status : s3a.listStatus(new Path("s3a://" + S3Server.BUCKET + "/plain"))) {
            size += status.getLen();
        }
        return size;
    }
}
