package io.sealpipe.hadoop;

import io.sealpipe.GcmOutputStream;
import io.sealpipe.GcmStreams;
import java.io.IOException;
import java.io.OutputStream;
import org.apache.hadoop.fs.Abortable;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;

/**
 * Writes one sealed file: a {@link GcmOutputStream} over the wrapped file system's stream.
 * {@link #close()} seals the message; a stream that failed, was aborted
 * ({@code FSDataOutputStream.abort()}) or was never closed leaves a file that every reader
 * rejects as truncated.
 *
 * <p>{@link #hflush()} and {@link #hsync()} pass on the sealed chunks and then flush or sync the
 * wrapped stream, but only at a chunk boundary (a multiple of 16 KiB written): a partial chunk
 * can only be sealed as the final one, by {@code close()}. Elsewhere they throw
 * {@link UnsupportedOperationException}, and {@link #hasCapability} answers false for both, as
 * it should for a stream that cannot always make written data visible. Not thread-safe, as
 * Hadoop's output streams are not.
 */
final class SealedOutputStream extends OutputStream implements Syncable, StreamCapabilities, Abortable {
    private static final int CHUNK_SIZE = 16 * 1024;

    private final Path path;
    private final FSDataOutputStream out;
    private final GcmOutputStream gcm;

    SealedOutputStream(Path path, FSDataOutputStream out, GcmStreams keys) {
        this.path = path;
        this.out = out;
        this.gcm = keys.encrypt(out);
    }

    @Override
    public void write(int b) throws IOException {
        gcm.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        gcm.write(b, off, len);
    }

    /** Passes on the header and the sealed chunks; a partial chunk stays here. */
    @Override
    public void flush() throws IOException {
        gcm.flush();
    }

    @Override
    public void hflush() throws IOException {
        wholeChunksOnly("hflush");
        gcm.flush();
        out.hflush();
    }

    @Override
    public void hsync() throws IOException {
        wholeChunksOnly("hsync");
        gcm.flush();
        out.hsync();
    }

    private void wholeChunksOnly(String operation) {
        long written = gcm.plaintextWritten();
        if (written % CHUNK_SIZE != 0) {
            throw new UnsupportedOperationException(operation + " of " + path + " at byte " + written + ": a sealed file is"
                    + " sealed in 16 KiB chunks and only close() may seal a partial chunk (the final one), so written data"
                    + " can only be passed on at a multiple of 16384 bytes; and no reader accepts the file before it is closed");
        }
    }

    /** False for hflush and hsync (they work at chunk boundaries only) and for everything else. */
    @Override
    public boolean hasCapability(String capability) {
        return false;
    }

    /** Seals the message and closes the wrapped stream. */
    @Override
    public void close() throws IOException {
        gcm.close();
    }

    /**
     * Abandons the file: never seals it (every reader rejects it as truncated) and closes, or
     * aborts where it can, the wrapped stream.
     */
    @Override
    public AbortableResult abort() {
        boolean alreadyClosed = !gcm.isOpen();
        if (!alreadyClosed && out.hasCapability(StreamCapabilities.ABORTABLE_STREAM)) {
            out.abort(); // an object store then writes nothing at all
        }
        gcm.abort(); // closes the wrapped stream (if not aborted), which ends a file that no reader accepts
        return new AbortableResult() {
            @Override
            public boolean alreadyClosed() {
                return alreadyClosed;
            }

            @Override
            public IOException anyCleanupException() {
                return null; // GcmOutputStream.abort() reports none: the output is abandoned anyway
            }
        };
    }

    @Override
    public String toString() {
        return "SealedOutputStream(" + path + ")";
    }
}
