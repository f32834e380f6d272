package io.sealpipe.hadoop;

import io.sealpipe.gcm.GcmSeekableChannel;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What a {@link SealedInputStream} reads: the content of one sealed file, as the message's
 * plaintext itself ({@link #of}) or decompressed from it ({@link SnappyIndexedContent}).
 * Positioned reads are thread-safe; the position and {@link #read(ByteBuffer)} are for one
 * thread at a time (the stream's lock).
 */
interface SealedContent extends Closeable {
    /** The content's length in bytes. */
    long length() throws IOException;

    long position() throws IOException;

    void position(long position) throws IOException;

    /** Reads at the position and advances it; -1 at the end. */
    int read(ByteBuffer dst) throws IOException;

    /** Reads at {@code position}, leaving the position alone; -1 at or past the end. */
    int read(long position, byte[] b, int off, int len) throws IOException;

    /** Reads {@code len} bytes at {@code position} or throws {@link java.io.EOFException}. */
    void readFully(long position, byte[] b, int off, int len) throws IOException;

    /** The 16 KiB chunks of the message decrypted and verified so far. */
    long chunksOpened();

    boolean isOpen();

    /** The message's plaintext as it is. */
    static SealedContent of(GcmSeekableChannel channel, long length) {
        return new SealedContent() {
            @Override
            public long length() {
                return length;
            }

            @Override
            public long position() throws IOException {
                return channel.position();
            }

            @Override
            public void position(long position) throws IOException {
                channel.position(position);
            }

            @Override
            public int read(ByteBuffer dst) throws IOException {
                return channel.read(dst);
            }

            @Override
            public int read(long position, byte[] b, int off, int len) throws IOException {
                return channel.read(position, b, off, len);
            }

            @Override
            public void readFully(long position, byte[] b, int off, int len) throws IOException {
                channel.readFully(position, b, off, len);
            }

            @Override
            public long chunksOpened() {
                return channel.chunksOpened();
            }

            @Override
            public boolean isOpen() {
                return channel.isOpen();
            }

            @Override
            public void close() throws IOException {
                channel.close();
            }
        };
    }
}
