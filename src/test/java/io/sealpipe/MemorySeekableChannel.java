package io.sealpipe;

import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;

/**
 * A read-only {@link SeekableByteChannel} over a byte array that returns at most
 * {@code maxRead} bytes per read: not a {@code FileChannel}, so readers take their generic
 * (position, read, restore) path, and short reads show whether they loop.
 */
final class MemorySeekableChannel implements SeekableByteChannel {
    private final byte[] data;
    private final int maxRead;
    private long position;
    private boolean open = true;

    MemorySeekableChannel(byte[] data, int maxRead) {
        if (maxRead < 1) {
            throw new IllegalArgumentException("maxRead must be >= 1, not " + maxRead);
        }
        this.data = data;
        this.maxRead = maxRead;
    }

    @Override
    public synchronized int read(ByteBuffer dst) throws ClosedChannelException {
        checkOpen();
        if (position >= data.length) {
            return -1;
        }
        int n = (int) Math.min(Math.min(dst.remaining(), maxRead), data.length - position);
        dst.put(data, (int) position, n);
        position += n;
        return n;
    }

    @Override
    public int write(ByteBuffer src) {
        throw new NonWritableChannelException();
    }

    @Override
    public synchronized long position() throws ClosedChannelException {
        checkOpen();
        return position;
    }

    @Override
    public synchronized SeekableByteChannel position(long newPosition) throws ClosedChannelException {
        checkOpen();
        if (newPosition < 0) {
            throw new IllegalArgumentException("position must be >= 0, not " + newPosition);
        }
        position = newPosition;
        return this;
    }

    @Override
    public long size() throws ClosedChannelException {
        checkOpen();
        return data.length;
    }

    @Override
    public SeekableByteChannel truncate(long size) {
        throw new NonWritableChannelException();
    }

    @Override
    public synchronized boolean isOpen() {
        return open;
    }

    @Override
    public synchronized void close() {
        open = false;
    }

    private void checkOpen() throws ClosedChannelException {
        if (!open) {
            throw new ClosedChannelException();
        }
    }
}
