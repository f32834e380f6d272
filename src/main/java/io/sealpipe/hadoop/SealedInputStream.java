package io.sealpipe.hadoop;

import io.sealpipe.PositionedInput;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.hadoop.EnvelopeKeys;
import io.sealpipe.internal.hadoop.SealedKeys;
import io.sealpipe.internal.hadoop.SealedReader;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.function.IntFunction;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsBinding;

/**
 * The plaintext of one sealed file: a {@link GcmSeekableChannel} over the wrapped file
 * system's stream. Seeks and reads by the stream's own position go to the wrapped stream's
 * {@code seek} and {@code read} (one request for a run of sequential reads); positioned reads
 * ({@link #read(long, byte[], int, int)}, {@link #readFully(long, byte[], int, int)}) to its
 * positioned reads, and are safe from several threads at once. Only the chunks a read touches
 * are read and authenticated; a chunk that fails gives a {@link StreamAuthenticationException}
 * naming the path and the chunk, and none of its bytes.
 */
final class SealedInputStream extends FSInputStream implements ByteBufferReadable, StreamCapabilities, IOStatisticsSource {
    private final Path path;
    private final FSDataInputStream in;
    private final SealedContent channel; // the plaintext, or the decompressed content
    private final GcmSeekableChannel message; // the plaintext's chunks, for vectored reads; null if compressed
    private final long base; // where the message starts in the stored file: after an envelope, or 0
    private final long length; // plaintext, from the stored length (authenticated when the end is read)
    private final FileSystem.Statistics statistics; // plaintext bytes read, for Spark's and MapReduce's input metrics
    private final ByteBuffer oneByte = ByteBuffer.allocate(1);
    private final IOStatistics ioStatistics;

    private SealedInputStream(Path path, FSDataInputStream in, SealedContent channel, GcmSeekableChannel message,
            long base, long length, FileSystem.Statistics statistics) {
        this.path = path;
        this.in = in;
        this.channel = channel;
        this.message = message;
        this.base = base;
        this.length = length;
        this.statistics = statistics;
        this.ioStatistics = IOStatisticsBinding.dynamicIOStatistics()
                .withLongFunctionCounter(SealedFileSystem.CHUNKS_OPENED, key -> channel.chunksOpened())
                .build();
    }

    /** {@value SealedFileSystem#CHUNKS_OPENED}: the chunks this stream decrypted and verified. */
    @Override
    public IOStatistics getIOStatistics() {
        return ioStatistics;
    }

    private int counted(int n) {
        if (n > 0 && statistics != null) {
            statistics.incrementBytesRead(n);
        }
        return n;
    }

    /**
     * Reads the header of the file in {@code in} ({@code storedLength} bytes), finds its key and
     * opens it: an envelope file (it begins with an envelope) under its data key, unwrapped by
     * {@code envelopes}; a direct-key file under the key version that {@code keys} finds for its
     * header. Closes {@code in} if it fails. A file whose stored length no sealed file has (still
     * being written, or cut short) opens with its listed length
     * ({@link SealedFileSystem#listedLength}: its whole sealed chunks and one byte); reading past
     * the whole chunks fails as truncated, never as the end of the file.
     *
     * @param mode the file system's key mode: whether a file of the other kind opens
     * @throws IOException naming {@code path} if the stored length is shorter than a header, the
     *     file is of the other key mode and {@code mode} does not read it, the
     *     envelope is cut short, corrupt or of an unknown version, no key matches, the KMS refuses
     *     or fails, or reading fails; for a compressed file, also if it is not whole
     */
    static SealedInputStream open(Path path, FSDataInputStream in, long storedLength, SealedKeys keys,
            EnvelopeKeys envelopes, SealedReader.KeyMode mode, int cachedChunks, boolean compression,
            FileSystem.Statistics statistics) throws IOException {
        try {
            // One read for the header of either kind: an envelope and its message's header, or a
            // direct file's header and the start of its first chunk (one request on an object store).
            byte[] first = new byte[(int) Math.min(Math.max(storedLength, 0), SealedReader.FIRST_BYTES)];
            if (storedLength >= GcmStreams.HEADER_LENGTH) {
                in.readFully(0, first);
            }
            SealedReader.Opened opened = SealedReader.open(path, first, storedLength, new Input(in), keys, envelopes, mode,
                    cachedChunks);
            GcmSeekableChannel channel = opened.channel();
            if (!opened.compressed()) {
                return new SealedInputStream(path, in, SealedContent.of(channel, opened.length()), channel, opened.base(),
                        opened.length(), statistics);
            }
            SnappyIndexedContent content;
            try {
                if (!compression) {
                    throw new IOException(path + " was written compressed (" + SealedFileSystem.COMPRESS + "=snappy): read"
                            + " it through a sealed file system with that setting, which reports its uncompressed length");
                }
                content = SnappyIndexedContent.open(channel, path.toString());
            } catch (Throwable e) {
                channel.close();
                throw e;
            }
            return new SealedInputStream(path, in, content, null, opened.base(), content.length(), statistics);
        } catch (StreamAuthenticationException e) {
            closeAfter(in, e);
            throw e.in(path.toString());
        } catch (Throwable e) {
            closeAfter(in, e);
            throw e;
        }
    }

    private static void closeAfter(FSDataInputStream in, Throwable failure) {
        try {
            in.close();
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    /** The content's length: the plaintext's, or a compressed file's uncompressed length. */
    long length() {
        return length;
    }

    /** The wrapped stream's positioned reads, and seek then read for the channel's own reads. */
    private record Input(FSDataInputStream in) implements PositionedInput {
        @Override
        public int read(long position, byte[] buffer, int offset, int length) throws IOException {
            return in.read(position, buffer, offset, length);
        }

        @Override
        public int readSequentially(long position, byte[] buffer, int offset, int length) throws IOException {
            if (in.getPos() != position) {
                in.seek(position);
            }
            return in.read(buffer, offset, length);
        }
    }

    @Override
    public synchronized void seek(long pos) throws IOException {
        checkOpen();
        if (pos < 0) {
            throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK + ": " + pos + " in " + path);
        }
        if (pos > length) {
            throw new EOFException(FSExceptionMessages.CANNOT_SEEK_PAST_EOF + ": " + pos + " in " + path + " of " + length
                    + " bytes");
        }
        channel.position(pos);
    }

    @Override
    public synchronized long getPos() throws IOException {
        checkOpen();
        return channel.position();
    }

    /** There is one source: the wrapped file system chooses replicas itself. */
    @Override
    public boolean seekToNewSource(long targetPos) {
        return false;
    }

    @Override
    public synchronized int read() throws IOException {
        oneByte.clear();
        int n = read(oneByte);
        return n <= 0 ? -1 : oneByte.get(0) & 0xff;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        validatePositionedReadArgs(0, b, off, len);
        checkOpen();
        if (len == 0) {
            return 0;
        }
        return read(ByteBuffer.wrap(b, off, len));
    }

    /** Reads into {@code buf} from its position to its limit, heap or direct. */
    @Override
    public synchronized int read(ByteBuffer buf) throws IOException {
        checkOpen();
        try {
            return counted(channel.read(buf));
        } catch (StreamAuthenticationException e) {
            throw e.in(path.toString());
        }
    }

    @Override
    public int read(long position, byte[] buffer, int offset, int len) throws IOException {
        validatePositionedReadArgs(position, buffer, offset, len);
        checkOpen();
        if (len == 0) {
            return 0;
        }
        try {
            return counted(channel.read(position, buffer, offset, len));
        } catch (StreamAuthenticationException e) {
            throw e.in(path.toString());
        }
    }

    @Override
    public void readFully(long position, byte[] buffer, int offset, int len) throws IOException {
        validatePositionedReadArgs(position, buffer, offset, len);
        checkOpen();
        try {
            channel.readFully(position, buffer, offset, len);
            counted(len);
        } catch (StreamAuthenticationException e) {
            throw e.in(path.toString());
        } catch (EOFException e) {
            EOFException eof = new EOFException(FSExceptionMessages.EOF_IN_READ_FULLY + ": " + path + " has " + length
                    + " bytes; " + e.getMessage());
            eof.initCause(e);
            throw eof;
        }
    }

    /**
     * Reads {@code ranges} of the plaintext: the chunks that hold them are read with the wrapped
     * stream's own {@code readVectored} (S3A fetches them in parallel requests), each decrypted
     * and verified once, and a chunk that fails authentication fails only the ranges that touch
     * it ({@link StreamAuthenticationException}, naming the path and the chunk). A range past
     * the end fails with an {@link EOFException}. A compressed file's ranges are read one by
     * one with positioned reads, as Hadoop's default does.
     */
    @Override
    public void readVectored(List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate) throws IOException {
        checkOpen();
        if (message == null) {
            super.readVectored(ranges, allocate);
            return;
        }
        long bytes = SealedVectoredRead.read(path, in, base, message, length, ranges, allocate);
        if (statistics != null) {
            statistics.incrementBytesRead(bytes); // here, in the caller's thread: Spark's task metrics read its counts
        }
    }

    /** The bytes left to the end, as HDFS's stream answers (up to {@code Integer.MAX_VALUE}). */
    @Override
    public synchronized int available() throws IOException {
        checkOpen();
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, length - channel.position()));
    }

    @Override
    public boolean hasCapability(String capability) {
        String c = capability.toLowerCase(Locale.ROOT);
        return StreamCapabilities.READBYTEBUFFER.equals(c) || (StreamCapabilities.VECTOREDIO.equals(c) && message != null);
    }

    private void checkOpen() throws IOException {
        if (!channel.isOpen()) {
            throw new IOException(FSExceptionMessages.STREAM_IS_CLOSED + ": " + path);
        }
    }

    /** Closes the channel (zeroing its key and cached chunks), then the wrapped stream. */
    @Override
    public void close() throws IOException {
        try {
            channel.close();
        } finally {
            in.close();
        }
    }

    @Override
    public String toString() {
        return "SealedInputStream(" + path + ")";
    }
}
