package io.sealpipe.hadoop;

import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.Log;
import io.sealpipe.internal.sealed.SealedMessage;
import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.fs.Abortable;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSError;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;

/**
 * Writes one sealed file: a {@link GcmOutputStream} over the wrapped file system's stream.
 * {@link #close()} seals the message, then closes the wrapped stream; a stream that failed, was
 * aborted ({@code FSDataOutputStream.abort()}) or was never closed leaves a file that every
 * reader rejects as truncated. Where the wrapped stream can abort (S3A's), a stream that failed
 * or was aborted aborts it instead of closing it, so that nothing is stored: no object and no
 * pending multipart upload.
 *
 * <p>{@link #hflush()} and {@link #hsync()} pass on the sealed chunks and then flush or sync the
 * wrapped stream, but only at a chunk boundary (a multiple of 16 KiB written): a partial chunk
 * can only be sealed as the final one, by {@code close()}. Elsewhere they throw
 * {@link UnsupportedOperationException}, and {@link #hasCapability} answers false for both, as
 * it should for a stream that cannot always make written data visible. With
 * {@link SealedFileSystem#DOWNGRADE_SYNCABLE_EXCEPTIONS} set they instead pass on the whole chunks
 * and flush the wrapped stream, and the first such call in the JVM logs a warning (as S3A does
 * with its own {@code fs.s3a.downgrade.syncable.exceptions}). Not thread-safe, as Hadoop's output
 * streams are not.
 */
final class SealedOutputStream extends OutputStream implements Syncable, StreamCapabilities, Abortable {
    private static final int CHUNK_SIZE = 16 * 1024;
    private static final Log LOG = Log.of(SealedOutputStream.class);
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private final Path path;
    private final FSDataOutputStream out;
    private final SealedMessage message;
    private final GcmOutputStream gcm;
    private final SnappyIndexedOutputStream snappy; // null: not compressed
    private final OutputStream content; // snappy, or gcm itself
    private final boolean downgradeSyncable;
    private final java.util.function.BooleanSupplier keysClosed; // closed with the file system, which ends this file unsealed
    private volatile boolean aborted;

    /**
     * @param envelope the envelope to write before the message (envelope mode), or null
     * @param streams the key version's streams: of the compressed context if {@code compress};
     *     this stream takes what it needs from them now
     * @param compress whether the content is compressed ({@link SnappyIndexedOutputStream})
     * @param keysClosed whether the file system's keys are closed: once they are, this file is
     *     abandoned unsealed at its next call
     */
    SealedOutputStream(Path path, FSDataOutputStream out, byte[] envelope, GcmStreams streams, boolean compress,
            boolean downgradeSyncable, java.util.function.BooleanSupplier keysClosed) throws IOException {
        this.path = path;
        this.out = out;
        this.keysClosed = keysClosed;
        // a failure: the caller abandons out
        this.message = SealedMessage.start(out, envelope, streams, () -> abandon(out));
        this.gcm = message.gcm();
        try {
            this.snappy = compress ? new SnappyIndexedOutputStream(gcm) : null;
        } catch (Throwable e) { // an Error too (snappy-java's native library failing to load)
            message.abandon(); // frees the cipher and the key copies
            throw e;
        }
        this.content = compress ? snappy : gcm;
        this.downgradeSyncable = downgradeSyncable;
    }

    @Override
    public void write(int b) throws IOException {
        checkFileSystemOpen();
        content.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        checkFileSystemOpen();
        content.write(b, off, len);
    }

    /**
     * Abandons the file (unsealed: no reader accepts it) and throws once the file system was
     * closed, as HDFS fails the files a closed client was writing: closing it destroys the keys,
     * and nothing is sealed after that.
     */
    private void checkFileSystemOpen() throws IOException {
        if (keysClosed.getAsBoolean()) {
            abort();
            throw new IOException(path + ": the sealed file system was closed while this file was being written (its keys"
                    + " are destroyed with it), so the file is left unsealed and no reader accepts it: write it again"
                    + " through a file system that is open");
        }
    }

    /** Passes on the header and the sealed chunks; a partial chunk (and frame) stays here. */
    @Override
    public void flush() throws IOException {
        if (aborted) {
            return; // as Hadoop's Abortable says: a flush after abort() does nothing
        }
        checkFileSystemOpen();
        content.flush();
    }

    @Override
    public void hflush() throws IOException {
        checkFileSystemOpen();
        if (atChunkBoundary("hflush")) {
            gcm.flush();
            out.hflush();
        } else {
            flushWholeChunks();
        }
    }

    /** The downgraded hflush/hsync: the whole chunks to the wrapped stream, and its flush. */
    private void flushWholeChunks() throws IOException {
        content.flush();
        out.flush();
    }

    @Override
    public void hsync() throws IOException {
        checkFileSystemOpen();
        if (atChunkBoundary("hsync")) {
            gcm.flush();
            out.hsync();
        } else {
            flushWholeChunks();
        }
    }

    /**
     * True at a chunk boundary; elsewhere throws, or with the downgrade set warns (once per JVM)
     * and answers false.
     */
    private boolean atChunkBoundary(String operation) {
        long written = gcm.plaintextWritten();
        String reason;
        if (snappy == null) {
            if (written % CHUNK_SIZE == 0) {
                return true;
            }
            reason = operation + " of " + path + " at byte " + written + ": a sealed file is sealed in 16 KiB chunks and"
                    + " only close() may seal a partial chunk (the final one), so written data can only be passed on at a"
                    + " multiple of 16384 bytes; and no reader accepts the file before it is closed";
        } else {
            reason = operation + " of " + path + ", a compressed sealed file (" + SealedFileSystem.COMPRESS + "=snappy):"
                    + " its content is compressed in 64 KiB frames and sealed in 16 KiB chunks, and only close() ends"
                    + " both, so written data cannot be made visible before it; and no reader accepts the file before it"
                    + " is closed";
        }
        if (!downgradeSyncable) {
            throw new UnsupportedOperationException(reason + ". If the caller only flushes before close() (Parquet 1.14"
                    + " and 1.15, as in Spark 4.0, call hflush() in close()), set "
                    + SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS + "=true to make such calls a flush of the whole chunks");
        }
        if (WARNED.compareAndSet(false, true)) {
            LOG.warn("{}. Only the whole chunks were flushed, since {}=true; this warning is logged once", reason,
                    SealedFileSystem.DOWNGRADE_SYNCABLE_EXCEPTIONS);
        }
        return false;
    }

    /**
     * False for hflush and hsync (they work at chunk boundaries only); {@code abort()}'s
     * capability only where the wrapped stream has it, since only then does an aborted file leave
     * nothing behind (elsewhere it leaves a file that every reader rejects); false for the rest.
     */
    @Override
    public boolean hasCapability(String capability) {
        return StreamCapabilities.ABORTABLE_STREAM.equals(capability) && out.hasCapability(capability);
    }

    /**
     * Seals the message, then closes the wrapped stream; a compressed file's last frame and index
     * go first. If anything fails on the way (here or in an earlier write), the message is
     * abandoned, not sealed, and the wrapped stream aborted where it can be (an object store
     * then stores nothing and keeps no pending upload), else closed. After the file system was
     * closed, abandons the file and throws instead.
     */
    @Override
    public void close() throws IOException {
        if (gcm.isOpen()) {
            checkFileSystemOpen();
        }
        if (snappy != null && gcm.isOpen()) {
            try {
                snappy.finish();
            } catch (Throwable e) { // an Error too: never seal a content without its index
                snappy.discard();
                message.fail(e);
                throw e;
            }
        }
        message.seal(); // seals, then closes out; or abandons out and throws the failure that stopped the message
    }

    /**
     * Aborts {@code out} where it can be (an object store then stores nothing at all), else
     * closes it.
     *
     * @return what went wrong on the way, or null
     */
    static IOException abandon(FSDataOutputStream out) {
        try {
            if (out.hasCapability(StreamCapabilities.ABORTABLE_STREAM)) {
                return out.abort().anyCleanupException();
            }
            return SealedMessage.closeAbandoned(out);
        } catch (RuntimeException e) {
            return new IOException(e);
        } catch (FSError e) {
            // Hadoop's local file system reports a failed write (a full disk) as this Error; here,
            // while abandoning a file that failed already, it is only what the cleanup hit.
            return e.getCause() instanceof IOException cause ? cause : new IOException(e);
        }
    }

    /**
     * Abandons the file: never seals it (every reader rejects it as truncated) and closes, or
     * aborts where it can, the wrapped stream.
     */
    @Override
    public AbortableResult abort() {
        aborted = true;
        boolean alreadyClosed = !gcm.isOpen();
        if (snappy != null) {
            snappy.discard();
        }
        IOException cleanup = message.abandon(); // frees the cipher and the key copies; never seals
        return new AbortableResult() {
            @Override
            public boolean alreadyClosed() {
                return alreadyClosed;
            }

            @Override
            public IOException anyCleanupException() {
                return cleanup; // the wrapped stream's (GcmOutputStream.abort() reports none)
            }
        };
    }

    @Override
    public String toString() {
        return "SealedOutputStream(" + path + ")";
    }
}
