/**
 * Implementation helpers shared by the engines and streams: argument checks, buffer handling,
 * base classes, the shared worker threads ({@link io.sealpipe.internal.Workers}) and the jobs
 * they help with ({@link io.sealpipe.internal.ParallelJob}, kept in order by
 * {@link io.sealpipe.internal.JobRing}), the optional dependencies
 * ({@link io.sealpipe.internal.OptionalDependency}), logging through the application's SLF4J or
 * the JDK's ({@link io.sealpipe.internal.Log}), and test data. Not an API: anything
 * here may change without notice.
 */
package io.sealpipe.internal;
