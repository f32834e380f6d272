/**
 * What the sealed file system ({@code io.sealpipe.hadoop.SealedFileSystem}) and the sealed
 * Iceberg FileIO ({@code io.sealpipe.iceberg.SealedFileIO}) share of the sealed-file format and
 * its writing, with no Hadoop or Iceberg type: the length arithmetic ({@link
 * io.sealpipe.internal.sealed.SealedLayout}) and the writer's seal-or-abandon rules ({@link
 * io.sealpipe.internal.sealed.SealedMessage}). Their key lookup and opening, which need Hadoop's
 * key providers, are in {@code io.sealpipe.internal.hadoop}. Not an API: anything here may change
 * without notice.
 */
package io.sealpipe.internal.sealed;
