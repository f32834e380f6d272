/**
 * Implementation helpers shared by the engines and streams: argument checks, buffer handling,
 * base classes, the shared worker threads ({@link io.sealpipe.internal.Workers}) and the jobs
 * they help with ({@link io.sealpipe.internal.ParallelJob}, kept in order by
 * {@link io.sealpipe.internal.JobRing}), the optional dependencies
 * ({@link io.sealpipe.internal.OptionalDependency}), logging through the application's SLF4J or
 * the JDK's ({@link io.sealpipe.internal.Log}), test data, and what the format packages
 * ({@code gcm}, {@code ctr}, {@code snappy}) share: the ciphertext ends of their streams
 * ({@link io.sealpipe.internal.CiphertextSink}, {@link io.sealpipe.internal.CiphertextSource}),
 * a stream's open, failed or closed state ({@link io.sealpipe.internal.StreamState}), a builder's
 * key ({@link io.sealpipe.internal.BuilderKey}) and the key bytes themselves
 * ({@link io.sealpipe.internal.KeyAccess}); and the envelope of the sealed file system's envelope
 * files ({@link io.sealpipe.internal.Envelope}), which the CLI's {@code inspect} reads too. Not an API: anything here may change without notice.
 */
package io.sealpipe.internal;
