package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.AwsEnvelopeKms;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.Envelope;
import io.sealpipe.it.s3.AwsKmsServer;
import io.sealpipe.it.s3.S3Server;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;

/**
 * Spark SQL writing and reading Parquet on {@code ss3a://} in envelope mode under an AWS KMS key
 * named by its alias ({@link AwsEnvelopeKms}), against S3Proxy and local-kms ({@link
 * AwsKmsServer}) on 127.0.0.1: part objects written (1,000 on Spark 4.0), read back whole and with a filter,
 * the rows of the same job on plain {@code s3a://}; every part object an envelope file of kind 2
 * naming the key's ARN; the KMS calls of the whole job, counted by the server, at most 10.
 *
 * <p>Spark 3.5's S3A (Hadoop 3.3.4) is on the AWS SDK v1: the KMS client there uses the SDK v2's
 * own jars and its default credential chain (the system properties that the POM sets); Spark
 * 4.0's (Hadoop 3.4.1) has the SDK v2 bundle, and the client takes S3A's credentials.
 */
class SealedAwsKmsSparkTest {
    private static final Path TARGET = Path.of(System.getProperty("sealpipe.it.dir", "target"));
    /** Part objects the job writes: 1,000 on Spark 4.0 (the target's job), fewer on 3.5 (time in CI). */
    private static final int FILES = Integer.getInteger("sealpipe.it.aws.files", 200);
    private static final byte[] PARQUET_MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);

    @Test
    void parquetOnSealedS3UnderAnAwsKmsKeyInAtMostTenKmsCalls() throws Exception {
        try (S3Server s3 = S3Server.start(); AwsKmsServer kms = AwsKmsServer.start(TARGET.resolve("local-kms"))) {
            SparkSession.Builder builder = SparkSession.builder().master("local[2]").appName("sealed-aws-kms")
                    .config("spark.ui.enabled", "false")
                    .config("spark.sql.shuffle.partitions", "4")
                    .config("spark.hadoop.fs.ss3a.impl", SealedFileSystem.class.getName())
                    .config("spark.hadoop." + SealedFileSystem.wrapsKey("ss3a"), "s3a")
                    .config("spark.hadoop.sealpipe.fs.key.mode", "envelope")
                    .config("spark.hadoop." + SealedFileSystem.KMS_CLASS, AwsEnvelopeKms.class.getName())
                    .config("spark.hadoop." + SealedFileSystem.KEY_NAME, AwsKmsServer.ALIAS)
                    .config("spark.hadoop." + AwsEnvelopeKms.ENDPOINT, kms.endpoint())
                    // Parquet 1.15 (Spark 4.0) calls hflush; a sealed file can only seal at close
                    // (docs/sealed-files.md, "Parquet").
                    .config("spark.hadoop." + SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS, "true");
            s3.s3aSettings().forEach((k, v) -> builder.config("spark.hadoop." + k, v));
            SparkSession spark = builder.getOrCreate();
            try {
                int before = kms.requests();
                String sealed = "ss3a://" + S3Server.BUCKET + "/aws-kms/sealed";
                String plain = "s3a://" + S3Server.BUCKET + "/aws-kms/plain";
                Dataset<Row> table = spark.range(0, 50_000).withColumn("part", functions.col("id").mod(4))
                        .withColumn("text", functions.concat(functions.lit("row "), functions.col("id").cast("string")));
                table.repartition(FILES).write().parquet(sealed);
                table.repartition(4).write().parquet(plain);

                Dataset<Row> read = spark.read().parquet(sealed);
                assertEquals(50_000, read.count());
                Dataset<Row> plainRead = spark.read().parquet(plain);
                assertEquals(0, read.exceptAll(plainRead).count(), "sealed rows not in the plain data set");
                assertEquals(0, plainRead.exceptAll(read).count(), "plain rows not in the sealed data set");
                List<Row> filtered = read.filter("part = 1 AND id >= 123 AND id < 1123").select("id", "text")
                        .orderBy("id").collectAsList();
                assertEquals(plainRead.filter("part = 1 AND id >= 123 AND id < 1123").select("id", "text")
                        .orderBy("id").collectAsList(), filtered);
                assertEquals(250, filtered.size());
                int calls = kms.requests() - before;

                Configuration conf = spark.sparkContext().hadoopConfiguration();
                FileSystem wrapped = FileSystem.get(URI.create("s3a://" + S3Server.BUCKET + "/"), conf);
                List<String> parts = new ArrayList<>();
                RemoteIterator<LocatedFileStatus> files = wrapped.listFiles(new org.apache.hadoop.fs.Path(
                        "s3a://" + S3Server.BUCKET + "/aws-kms/sealed"), true);
                while (files.hasNext()) {
                    FileStatus file = files.next();
                    if (file.getPath().getName().startsWith("part-")) {
                        parts.add(file.getPath().toString());
                    }
                }
                assertEquals(FILES, parts.size(), "a part object per partition");
                for (String part : parts) {
                    byte[] head = new byte[Envelope.LENGTH + 4];
                    try (InputStream in = wrapped.open(new org.apache.hadoop.fs.Path(part))) {
                        int n = in.readNBytes(head, 0, head.length);
                        assertEquals(head.length, n, part);
                    }
                    Envelope envelope = Envelope.parse(head);
                    assertEquals(Envelope.KIND_AWS, envelope.kind(), part);
                    assertEquals(AwsKmsServer.ALIAS, envelope.keyName(), part);
                    assertEquals(AwsKmsServer.arn(AwsKmsServer.KEY_MAIN), envelope.versionName(), part);
                    assertTrue(!Arrays.equals(PARQUET_MAGIC, Arrays.copyOfRange(head, Envelope.LENGTH, head.length)),
                            part + ": no Parquet in the clear");
                }
                System.out.printf("AWS KMS: %d part objects written and read by Spark: %d KMS requests"
                        + " (GenerateDataKey %d, Decrypt %d)%n", parts.size(), calls, kms.requests("GenerateDataKey"),
                        kms.requests("Decrypt"));
                assertTrue(kms.requests("GenerateDataKey") >= 1, "a positive control: the server saw the job's data key");
                assertTrue(calls <= 10, calls + " KMS calls for " + FILES + " files (target: at most 10)");
            } finally {
                spark.stop();
                FileSystem.closeAll();
            }
        }
    }
}
