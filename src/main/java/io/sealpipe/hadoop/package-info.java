/**
 * sealpipe for Hadoop (hadoop-common is provided by Hadoop): {@link
 * io.sealpipe.hadoop.SealpipeAesCtrCryptoCodec}, the AES-CTR {@code CryptoCodec} that HDFS
 * encryption zones and MapReduce's encrypted intermediate data load by class name.
 */
package io.sealpipe.hadoop;
