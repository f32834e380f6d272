/**
 * Sealed files for Apache Iceberg tables: {@link io.sealpipe.iceberg.SealedFileIO}, an Iceberg
 * {@code FileIO} that stores every file of a table through another {@code FileIO}
 * ({@code S3FileIO}, {@code HadoopFileIO}, {@code ResolvingFileIO}) as a sealed file, in the
 * stored format of the sealed file system ({@link io.sealpipe.hadoop.SealedFileSystem},
 * docs/FORMAT.md), so that one table's files read through either.
 *
 * <p>Needs Iceberg's {@code iceberg-api} and {@code iceberg-core} (1.11 or later) and Hadoop's
 * {@code hadoop-common} on the class path, as every engine that runs Iceberg (Spark, Flink,
 * Hive, Trino's Iceberg connector) has them: the keys come from Hadoop key providers and KMS
 * clients, configured as the sealed file system's are. Nothing outside this package uses Iceberg.
 */
package io.sealpipe.iceberg;
