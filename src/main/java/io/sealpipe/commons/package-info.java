/**
 * sealpipe for Apache Commons Crypto (an optional dependency): two ciphers that Spark's IO
 * encryption (and any user of Commons Crypto's {@code CryptoCipherFactory}) loads by class name.
 * {@link io.sealpipe.commons.SealpipeCryptoCipher} is AES-CTR, the bytes of Commons Crypto's own;
 * {@link io.sealpipe.commons.SealpipeChunkedGcmCipher} seals each stream in authenticated AES-GCM
 * chunks instead (docs/spark.md).
 */
package io.sealpipe.commons;
