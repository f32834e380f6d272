package io.sealpipe;

import java.io.IOException;

/**
 * Bytes readable at any position, for {@link io.sealpipe.ctr.CtrStreams#decrypt(PositionedInput)} and
 * {@link io.sealpipe.gcm.GcmStreams#open(PositionedInput, long, int)}. Its one abstract method has the
 * signature of Hadoop's {@code PositionedReadable.read}, so a Hadoop {@code FSDataInputStream} (HDFS, S3A, the local file system) is passed as a method reference
 * and sealpipe needs no Hadoop classes:
 *
 * <pre>{@code
 * try (FSDataInputStream file = fs.open(path);
 *         var in = ctr.decrypt(file::read)) {            // or (PositionedInput) file::read
 *     in.seek(4096);
 *     in.readFully(1 << 20, block, 0, block.length);     // positioned read, thread-safe
 * }
 * }</pre>
 *
 * <p>Calls must be safe from several threads at once and must not depend on each other (no
 * shared file position), as Hadoop requires of every stream with positioned reads.
 */
@FunctionalInterface
public interface PositionedInput {
    /**
     * Reads up to {@code length} bytes at {@code position} into {@code buffer} from
     * {@code offset}.
     *
     * @param position where to read, in bytes from the start of the data
     * @param buffer receives the bytes
     * @param offset where to write in {@code buffer}
     * @param length the most bytes to read
     * @return how many bytes were read: at least 1 if {@code length > 0} and {@code position} is
     *     before the end, 0 if {@code length} is 0, -1 at or past the end
     * @throws IOException if the underlying read fails; it reaches the caller of the decrypting
     *     stream as it is
     */
    int read(long position, byte[] buffer, int offset, int length) throws IOException;

    /**
     * The same read for a reader that moves forward through the data, one thread at a time
     * (a {@link io.sealpipe.gcm.GcmSeekableChannel}'s own position-moving reads). By default the positioned read
     * above; an input with a cheaper stateful read (a Hadoop stream: {@code seek} then
     * {@code read}, one request for many reads, where each positioned read may open the file
     * anew) overrides it. Calls to this method never run at the same time as each other, but
     * may run at the same time as {@link #read}.
     *
     * @param position where to read, in bytes from the start of the data
     * @param buffer receives the bytes
     * @param offset where to write in {@code buffer}
     * @param length the most bytes to read
     * @return as for {@link #read}
     * @throws IOException if the underlying read fails
     */
    default int readSequentially(long position, byte[] buffer, int offset, int length) throws IOException {
        return read(position, buffer, offset, length);
    }
}
