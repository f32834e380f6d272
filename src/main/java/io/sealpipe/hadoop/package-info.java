/**
 * sealpipe for Hadoop (hadoop-common is provided by Hadoop): {@link
 * io.sealpipe.hadoop.SealpipeAesCtrCryptoCodec}, the AES-CTR {@code CryptoCodec} that HDFS
 * encryption zones and MapReduce's encrypted intermediate data load by class name; and {@link
 * io.sealpipe.hadoop.SealedFileSystem}, a {@code FileSystem} that stores each file of another one
 * as one authenticated chunked AES-GCM message, with keys from a Hadoop {@code KeyProvider}: the
 * key's own material, or data keys that a KMS wraps (envelope mode), through an {@link
 * io.sealpipe.hadoop.EnvelopeKms}, by default {@link io.sealpipe.hadoop.HadoopEnvelopeKms}.
 */
package io.sealpipe.hadoop;
