package io.sealpipe;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SeekableByteChannel;

/**
 * Where an input stream reads ciphertext from: an InputStream, a ReadableByteChannel, or a
 * SeekableByteChannel, which alone allows seeking and positioned reads.
 */
abstract class CiphertextSource implements AutoCloseable {

    /** Like {@link InputStream#read(byte[], int, int)}: -1 at the end, else at least 1 byte when len > 0. */
    abstract int read(byte[] b, int off, int len) throws IOException;

    /** Skips up to n bytes; returns how many were skipped (0 only at the end). */
    abstract long skip(long n) throws IOException;

    /** An estimate of the bytes readable without blocking. */
    abstract long available() throws IOException;

    boolean seekable() {
        return false;
    }

    /** Moves to a position of the wrapped channel. */
    void seek(long position) throws IOException {
        throw new UnsupportedOperationException("seek needs a seekable source: build the stream over a SeekableByteChannel");
    }

    /** The wrapped channel's current position (where its first byte was, at creation). */
    long position() throws IOException {
        throw new UnsupportedOperationException("not seekable");
    }

    /** Size of the wrapped channel. */
    long size() throws IOException {
        throw new UnsupportedOperationException("not seekable");
    }

    /**
     * Reads at a channel position without moving the stream; safe from several threads.
     * Returns -1 at the end.
     */
    int readAt(long position, byte[] b, int off, int len) throws IOException {
        throw new UnsupportedOperationException(
                "positioned reads need a seekable source: build the stream over a SeekableByteChannel");
    }

    @Override
    public abstract void close() throws IOException;

    static CiphertextSource of(InputStream in) {
        return new StreamSource(in);
    }

    static CiphertextSource of(ReadableByteChannel in) {
        return in instanceof SeekableByteChannel s ? new SeekableSource(s) : new ChannelSource(in);
    }

    private static final class StreamSource extends CiphertextSource {
        private final InputStream in;

        StreamSource(InputStream in) {
            this.in = in;
        }

        @Override
        int read(byte[] b, int off, int len) throws IOException {
            return in.read(b, off, len);
        }

        @Override
        long skip(long n) throws IOException {
            long skipped = in.skip(n);
            if (skipped > 0 || n <= 0) {
                return skipped;
            }
            // InputStream.skip may return 0 before the end: read one byte to tell.
            byte[] one = new byte[1];
            return in.read(one, 0, 1) < 0 ? 0 : 1;
        }

        @Override
        long available() throws IOException {
            return in.available();
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    private static class ChannelSource extends CiphertextSource {
        final ReadableByteChannel channel;
        private ByteBuffer view;
        private byte[] viewArray;

        ChannelSource(ReadableByteChannel channel) {
            this.channel = channel;
        }

        /** A reusable heap ByteBuffer over b (no allocation while the caller's array stays the same). */
        ByteBuffer wrap(byte[] b, int off, int len) {
            if (viewArray != b) {
                view = ByteBuffer.wrap(b);
                viewArray = b;
            }
            view.limit(off + len).position(off);
            return view;
        }

        @Override
        int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            ByteBuffer dst = wrap(b, off, len);
            int n;
            do {
                n = channel.read(dst); // a non-blocking channel may return 0: keep trying
            } while (n == 0);
            return n;
        }

        @Override
        long skip(long n) throws IOException {
            byte[] scratch = new byte[(int) Math.min(n, 8192)];
            int read = n <= 0 ? 0 : read(scratch, 0, scratch.length);
            return Math.max(read, 0);
        }

        @Override
        long available() throws IOException {
            return 0;
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    private static final class SeekableSource extends ChannelSource {
        private final SeekableByteChannel seekable;

        SeekableSource(SeekableByteChannel channel) {
            super(channel);
            this.seekable = channel;
        }

        @Override
        boolean seekable() {
            return true;
        }

        @Override
        void seek(long position) throws IOException {
            seekable.position(position);
        }

        @Override
        long position() throws IOException {
            return seekable.position();
        }

        @Override
        long size() throws IOException {
            return seekable.size();
        }

        @Override
        long skip(long n) throws IOException {
            long here = seekable.position();
            long skipped = Math.max(0, Math.min(n, seekable.size() - here));
            seekable.position(here + skipped);
            return skipped;
        }

        @Override
        long available() throws IOException {
            return Math.max(0, seekable.size() - seekable.position());
        }

        @Override
        int readAt(long position, byte[] b, int off, int len) throws IOException {
            ByteBuffer dst = ByteBuffer.wrap(b, off, len);
            if (seekable instanceof FileChannel file) {
                return file.read(dst, position); // FileChannel's positioned read is thread-safe
            }
            synchronized (seekable) {
                long saved = seekable.position();
                try {
                    seekable.position(position);
                    return seekable.read(dst);
                } finally {
                    seekable.position(saved);
                }
            }
        }
    }
}
