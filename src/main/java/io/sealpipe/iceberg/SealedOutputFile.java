package io.sealpipe.iceberg;

import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.internal.sealed.SealedMessage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.util.function.Supplier;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

/** A sealed file to write, over the wrapped FileIO's file of its stored bytes. */
final class SealedOutputFile implements OutputFile {
    private final SealedStorage storage;
    private final OutputFile stored;

    SealedOutputFile(SealedStorage storage, OutputFile stored) {
        this.storage = storage;
        this.stored = stored;
    }

    /** As the wrapped file's {@code create()}: fails if the file exists (where the wrapped FileIO checks). */
    @Override
    public PositionOutputStream create() {
        return sealed(stored::create);
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
        return sealed(stored::createOrOverwrite);
    }

    /**
     * A new sealed file over the stream {@code open} makes, under the key's current version:
     * the key is taken first, so that a key problem leaves nothing behind.
     */
    private PositionOutputStream sealed(Supplier<PositionOutputStream> open) {
        storage.forgetHeader(location()); // a file read before, replaced
        SealedStorage.Sealing key;
        try {
            key = storage.forWriting(location());
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        try {
            PositionOutputStream out = open.get();
            try {
                return new Stream(SealedMessage.start(out, key.envelope(), key.streams(), () -> SealedMessage.closeAbandoned(out)), location());
            } catch (IOException e) {
                IOException cleanup = SealedMessage.closeAbandoned(out); // Iceberg's streams cannot be aborted
                if (cleanup != null) {
                    e.addSuppressed(cleanup);
                }
                throw new UncheckedIOException(location() + ": " + e.getMessage(), e);
            } catch (RuntimeException | Error e) {
                IOException cleanup = SealedMessage.closeAbandoned(out);
                if (cleanup != null) {
                    e.addSuppressed(cleanup);
                }
                throw e;
            }
        } finally {
            key.streams().destroy();
        }
    }

    @Override
    public String location() {
        return stored.location();
    }

    @Override
    public InputFile toInputFile() {
        return new SealedInputFile(storage, stored.toInputFile(), -1);
    }

    @Override
    public String toString() {
        return "SealedOutputFile(" + location() + ")";
    }

    /**
     * The plaintext of one sealed file: {@link #getPos()} is the plaintext position, and
     * {@code storedLength()} is left to its default (the position), so that Iceberg's manifests
     * record plaintext lengths, as they do for {@code HadoopFileIO} over the sealed file system.
     * {@link #close()} seals the file; if a write failed, it abandons it instead (see
     * {@link SealedMessage}) and throws.
     */
    private static final class Stream extends PositionOutputStream {
        private final SealedMessage message;
        private final GcmOutputStream gcm;
        private final String location;

        Stream(SealedMessage message, String location) {
            this.message = message;
            this.gcm = message.gcm();
            this.location = location;
        }

        @Override
        public long getPos() {
            return gcm.plaintextWritten();
        }

        @Override
        public void write(int b) throws IOException {
            try {
                gcm.write(b);
            } catch (ClosedChannelException e) {
                throw closed(e);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                gcm.write(b, off, len);
            } catch (ClosedChannelException e) {
                throw closed(e);
            }
        }

        private IOException closed(ClosedChannelException e) {
            return new IOException(location + ": the stream is closed (the file was sealed, or abandoned after a failed"
                    + " write): nothing more can be written to it", e);
        }

        /** Passes on the whole chunks; a partial chunk stays until {@code close()} seals it. */
        @Override
        public void flush() throws IOException {
            if (gcm.isOpen()) {
                gcm.flush();
            }
        }

        @Override
        public void close() throws IOException {
            message.seal();
        }

        @Override
        public String toString() {
            return "SealedFileIO output(" + location + ")";
        }
    }
}
