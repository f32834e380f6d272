package io.sealpipe.internal;

import io.sealpipe.PositionedInput;
import io.sealpipe.engine.StreamCipher;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SeekableByteChannel;

/**
 * Where an input stream reads ciphertext from: an InputStream, a ReadableByteChannel, a
 * SeekableByteChannel, a ByteBuffer or a PositionedInput; the last three allow seeking and
 * positioned reads.
 */
public abstract class CiphertextSource implements AutoCloseable {

    /** Like {@link InputStream#read(byte[], int, int)}: -1 at the end, else at least 1 byte when len > 0. */
    public abstract int read(byte[] b, int off, int len) throws IOException;

    /**
     * Reads up to {@code len} bytes of ciphertext and leaves them in {@code b} decrypted by
     * {@code cipher}; -1 at the end. Reads into {@code b} and decrypts in place, unless the
     * source holds its bytes in memory and can decrypt straight from there.
     */
    public int readDecrypted(StreamCipher cipher, byte[] b, int off, int len) throws IOException {
        int n = read(b, off, len);
        if (n > 0) {
            cipher.update(b, off, n, b, off);
        }
        return n;
    }

    /** Skips up to n bytes; returns how many were skipped (0 only at the end). */
    public abstract long skip(long n) throws IOException;

    /** An estimate of the bytes readable without blocking. */
    public abstract long available() throws IOException;

    public boolean seekable() {
        return false;
    }

    /** Whether the ciphertext is in memory, decrypted from there without a copy. */
    public boolean inMemory() {
        return false;
    }

    /** Moves the next sequential read to a position of the wrapped input. */
    public void seek(long position) throws IOException {
        throw new UnsupportedOperationException("seek needs a seekable source: build the stream over a SeekableByteChannel");
    }

    /** The position in the wrapped input of the next sequential byte (before any read: where the input was). */
    public long position() throws IOException {
        throw new UnsupportedOperationException("not seekable");
    }

    /** Size of the wrapped channel. */
    public long size() throws IOException {
        throw new UnsupportedOperationException("not seekable");
    }

    /**
     * Reads at a channel position without moving the stream; safe from several threads.
     * Returns -1 at the end.
     */
    public int readAt(long position, byte[] b, int off, int len) throws IOException {
        throw new UnsupportedOperationException(
                "positioned reads need a seekable source: build the stream over a SeekableByteChannel");
    }

    @Override
    public abstract void close() throws IOException;

    public static CiphertextSource of(InputStream in) {
        return new StreamSource(in);
    }

    public static CiphertextSource of(ReadableByteChannel in) {
        return in instanceof SeekableByteChannel s ? new SeekableSource(s) : new ChannelSource(in);
    }

    public static CiphertextSource of(ByteBuffer in) {
        return new BufferSource(in);
    }

    public static CiphertextSource of(PositionedInput in) {
        return new PositionedSource(in);
    }

    private static final class StreamSource extends CiphertextSource {
        private final InputStream in;

        StreamSource(InputStream in) {
            this.in = in;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return in.read(b, off, len);
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = in.skip(n);
            if (skipped > 0 || n <= 0) {
                return skipped;
            }
            // InputStream.skip may return 0 before the end: read one byte to tell.
            byte[] one = new byte[1];
            return in.read(one, 0, 1) < 0 ? 0 : 1;
        }

        @Override
        public long available() throws IOException {
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
        private byte[] skipScratch; // ciphertext only: never needs zeroing

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
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            ByteBuffer dst = wrap(b, off, len);
            int n;
            do {
                n = readNext(dst); // a non-blocking channel may return 0: keep trying
            } while (n == 0);
            return n;
        }

        /** One read of the next bytes of the stream. */
        int readNext(ByteBuffer dst) throws IOException {
            return channel.read(dst);
        }

        @Override
        public long skip(long n) throws IOException {
            if (n <= 0) {
                return 0;
            }
            if (skipScratch == null) {
                skipScratch = new byte[8192];
            }
            int read = read(skipScratch, 0, (int) Math.min(n, skipScratch.length));
            return Math.max(read, 0);
        }

        @Override
        public long available() throws IOException {
            return 0;
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    /**
     * A seekable channel read only at explicit positions: the stream keeps its own cursor and never
     * relies on the channel's position, which a positioned read on another thread may have moved
     * for a moment. A FileChannel reads at a position by itself (thread-safe, its position
     * untouched); any other channel is moved, read and moved back under the channel's lock, which
     * sequential and positioned reads both take, so neither reads where the other moved it.
     */
    private static final class SeekableSource extends ChannelSource {
        private final SeekableByteChannel seekable;
        private long cursor = -1; // channel position of the next sequential byte; -1 until first asked for

        SeekableSource(SeekableByteChannel channel) {
            super(channel);
            this.seekable = channel;
        }

        /** The cursor, starting at the channel's position when the stream first needs it (before any read). */
        private long cursor() throws IOException {
            if (cursor < 0) {
                cursor = seekable.position();
            }
            return cursor;
        }

        /** At the cursor, which it moves on. */
        @Override
        int readNext(ByteBuffer dst) throws IOException {
            int n = readAt(cursor(), dst);
            if (n > 0) {
                cursor += n;
            }
            return n;
        }

        @Override
        public boolean seekable() {
            return true;
        }

        @Override
        public void seek(long position) {
            cursor = position;
        }

        @Override
        public long position() throws IOException {
            return cursor();
        }

        @Override
        public long size() throws IOException {
            return seekable.size();
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = Math.max(0, Math.min(n, seekable.size() - cursor()));
            cursor += skipped;
            return skipped;
        }

        @Override
        public long available() throws IOException {
            return Math.max(0, seekable.size() - cursor());
        }

        @Override
        public int readAt(long position, byte[] b, int off, int len) throws IOException {
            return readAt(position, ByteBuffer.wrap(b, off, len));
        }

        private int readAt(long position, ByteBuffer dst) throws IOException {
            if (seekable instanceof FileChannel file) {
                return file.read(dst, position);
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

    /**
     * Ciphertext in a ByteBuffer (for example a mapped file or a received block): decrypted
     * straight from the buffer into the reader's array, with no copy in between. Reads a view
     * of its own, so the caller's buffer keeps its position and limit.
     */
    private static final class BufferSource extends CiphertextSource {
        private final ByteBuffer data;   // [0, limit) is the ciphertext; never moved (positioned reads)
        private final ByteBuffer cursor; // the same bytes for sequential reads: position = next byte
        private ByteBuffer view;
        private byte[] viewArray;

        BufferSource(ByteBuffer in) {
            this.data = in.slice();
            this.cursor = data.duplicate();
        }

        @Override
        public boolean inMemory() {
            return true;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            int n = Math.min(len, cursor.remaining());
            if (n == 0) {
                return len == 0 ? 0 : -1;
            }
            cursor.get(b, off, n);
            return n;
        }

        @Override
        public int readDecrypted(StreamCipher cipher, byte[] b, int off, int len) {
            int n = Math.min(len, cursor.remaining());
            if (n == 0) {
                return len == 0 ? 0 : -1;
            }
            int end = cursor.position() + n;
            int limit = cursor.limit();
            cursor.limit(end);
            try {
                cipher.update(cursor, wrap(b, off, n));
            } finally {
                cursor.limit(limit).position(end);
            }
            return n;
        }

        /** A reusable heap ByteBuffer over b (no allocation while the caller's array stays the same). */
        private ByteBuffer wrap(byte[] b, int off, int len) {
            if (viewArray != b) {
                view = ByteBuffer.wrap(b);
                viewArray = b;
            }
            view.limit(off + len).position(off);
            return view;
        }

        @Override
        public long skip(long n) {
            int skipped = (int) Math.max(0, Math.min(n, cursor.remaining()));
            cursor.position(cursor.position() + skipped);
            return skipped;
        }

        @Override
        public long available() {
            return cursor.remaining();
        }

        @Override
        public boolean seekable() {
            return true;
        }

        @Override
        public void seek(long position) {
            cursor.position((int) Math.min(position, data.limit()));
        }

        @Override
        public long position() {
            return cursor.position();
        }

        @Override
        public long size() {
            return data.limit();
        }

        @Override
        public int readAt(long position, byte[] b, int off, int len) {
            if (position >= data.limit()) {
                return len == 0 ? 0 : -1;
            }
            int n = (int) Math.min(len, data.limit() - position);
            data.get((int) position, b, off, n); // absolute: no shared state, safe from several threads
            return n;
        }

        @Override
        public void close() {
            // nothing to release: the buffer belongs to the caller
        }
    }

    /**
     * Ciphertext read by position only (a Hadoop {@code FSDataInputStream}'s positioned read):
     * sequential reads keep a cursor of their own, starting at the input's position 0; positioned
     * reads go straight to the input, which is safe from several threads by its contract. The
     * input has no size and nothing to close.
     */
    private static final class PositionedSource extends CiphertextSource {
        private final PositionedInput in;
        private final byte[] probe = new byte[1]; // for skip; ciphertext only
        private long cursor;

        PositionedSource(PositionedInput in) {
            this.in = in;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            int n;
            do {
                n = in.read(cursor, b, off, len); // 0 breaks the input's contract: ask again, as for channels
            } while (n == 0);
            if (n > 0) {
                cursor += n;
            }
            return n;
        }

        /**
         * Skips n bytes if the last of them exists; otherwise finds the end by halving the
         * distance, with one-byte reads (only near the end: the input cannot say its size).
         */
        @Override
        public long skip(long n) throws IOException {
            long skippable = 0;                              // these bytes exist
            long atMost = Math.min(n, Long.MAX_VALUE - cursor); // no more than these do
            long guess = atMost;
            while (skippable < atMost) {
                if (readAt(cursor + guess - 1, probe, 0, 1) > 0) {
                    skippable = guess;
                } else {
                    atMost = guess - 1;
                }
                guess = skippable + (atMost - skippable + 1) / 2;
            }
            cursor += skippable;
            return skippable;
        }

        @Override
        public long available() {
            return 0; // unknown without a size
        }

        @Override
        public boolean seekable() {
            return true;
        }

        @Override
        public void seek(long position) {
            cursor = position;
        }

        @Override
        public long position() {
            return cursor;
        }

        @Override
        public int readAt(long position, byte[] b, int off, int len) throws IOException {
            return in.read(position, b, off, len);
        }

        @Override
        public void close() {
            // nothing to close: the caller closes what the input reads from
        }
    }
}
