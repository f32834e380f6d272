/**
 * sealpipe for Apache Commons Crypto (an optional dependency): {@link
 * io.sealpipe.commons.SealpipeCryptoCipher}, the AES-CTR cipher that Spark's IO encryption (and
 * any user of Commons Crypto's {@code CryptoCipherFactory}) loads by class name.
 */
package io.sealpipe.commons;
