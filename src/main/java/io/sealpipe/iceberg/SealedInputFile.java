package io.sealpipe.iceberg;

import io.sealpipe.internal.sealed.SealedLayout;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;

/** A sealed file to read, over the wrapped FileIO's file of its stored bytes. */
final class SealedInputFile implements InputFile {
    private final SealedStorage storage;
    private final InputFile stored;
    private volatile long length; // plaintext, or -1 until asked

    /** @param length the plaintext length, or -1 if it is not known */
    SealedInputFile(SealedStorage storage, InputFile stored, long length) {
        this.storage = storage;
        this.stored = stored;
        this.length = length;
    }

    /**
     * The plaintext length: as given, or from the stored length (one request to the wrapped
     * FileIO, once), as this FileIO's key mode writes files.
     */
    @Override
    public long getLength() {
        long l = length;
        if (l < 0) {
            l = SealedLayout.listedLength(stored.getLength(), storage.prefix());
            length = l;
        }
        return l;
    }

    /** Whether the length is known without a request. */
    boolean lengthKnown() {
        return length >= 0;
    }

    /** The stored length: from the plaintext length if known, else the wrapped file's (a request). */
    long storedLength() {
        long l = length;
        return l >= 0 ? SealedLayout.storedLength(l, storage.prefix()) : stored.getLength();
    }

    @Override
    public SeekableInputStream newStream() {
        return new SealedSeekableStream(this, storage, stored.newStream());
    }

    @Override
    public String location() {
        return stored.location();
    }

    /** Whether the stored file exists (the wrapped FileIO's answer: a request on an object store). */
    @Override
    public boolean exists() {
        return stored.exists();
    }

    @Override
    public String toString() {
        return "SealedInputFile(" + location() + ")";
    }
}
