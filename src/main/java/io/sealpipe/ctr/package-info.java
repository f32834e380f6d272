/**
 * AES-CTR streams byte-compatible with Hadoop's and Apache Commons Crypto's {@code
 * CryptoOutputStream} and {@code CryptoInputStream}: the same key and IV give the same bytes, so
 * data written by either side reads on the other. Confidentiality only: CTR has no integrity,
 * and a changed byte decrypts to a changed byte without an error (use {@link io.sealpipe.gcm}
 * where data can be tampered with).
 *
 * <p>The API is three classes. {@link io.sealpipe.ctr.CtrStreams} is the factory: key, IV,
 * buffer size and engine in its {@link io.sealpipe.ctr.CtrStreams.Builder}. {@link
 * io.sealpipe.ctr.CryptoOutputStream} encrypts; {@link io.sealpipe.ctr.CryptoInputStream}
 * decrypts, with {@code seek} and positioned reads where its source is seekable (a file
 * channel, a buffer or a {@link io.sealpipe.PositionedInput}).
 *
 * <p>The class that splits large writes among workers is package-private.
 *
 * <p>{@code CtrStreams} is immutable and thread-safe, built once and validated in {@code build()};
 * the streams it makes are for one thread at a time, except the positioned reads of a {@code
 * CryptoInputStream}. Failures reach the caller as {@code IOException}s at the stream boundary.
 */
package io.sealpipe.ctr;
