package io.sealpipe;

import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;

/**
 * A read-only {@link SeekableByteChannel} over a byte array: not a {@code FileChannel}, so readers
 * take their generic (position, read, restore) path. It returns at most {@code maxRead} bytes per
 * read, so short reads show whether a reader loops. Like most channels (the JDK's own included)
 * it locks a private object rather than itself: each call is atomic, but holding the channel's
 * monitor keeps no other thread out. A test can make the next read on a chosen thread first run
 * a hook (outside the lock), to stop that thread at an exact point.
 */
public final class MemorySeekableChannel implements SeekableByteChannel {
    private final Object lock = new Object();
    private final byte[] data;
    private final int maxRead;
    private long position;
    private boolean open = true;
    private volatile Thread hookThread;
    private volatile Runnable hook;

    /** A channel that returns as much as each read asks for. */
    public MemorySeekableChannel(byte[] data) {
        this(data, Integer.MAX_VALUE);
    }

    public MemorySeekableChannel(byte[] data, int maxRead) {
        if (maxRead < 1) {
            throw new IllegalArgumentException("maxRead must be >= 1, not " + maxRead);
        }
        this.data = data;
        this.maxRead = maxRead;
    }

    /** Runs {@code hook} once, at the start of the next read on {@code thread}. */
    public void beforeNextRead(Thread thread, Runnable hook) {
        this.hook = hook;
        this.hookThread = thread;
    }

    @Override
    public int read(ByteBuffer dst) throws ClosedChannelException {
        if (Thread.currentThread() == hookThread) {
            hookThread = null;
            hook.run();
        }
        synchronized (lock) {
            checkOpen();
            if (position >= data.length) {
                return -1;
            }
            int n = (int) Math.min(Math.min(dst.remaining(), maxRead), data.length - position);
            dst.put(data, (int) position, n);
            position += n;
            return n;
        }
    }

    @Override
    public int write(ByteBuffer src) {
        throw new NonWritableChannelException();
    }

    @Override
    public long position() throws ClosedChannelException {
        synchronized (lock) {
            checkOpen();
            return position;
        }
    }

    @Override
    public SeekableByteChannel position(long newPosition) throws ClosedChannelException {
        synchronized (lock) {
            checkOpen();
            if (newPosition < 0) {
                throw new IllegalArgumentException("position must be >= 0, not " + newPosition);
            }
            position = newPosition;
            return this;
        }
    }

    @Override
    public long size() throws ClosedChannelException {
        synchronized (lock) {
            checkOpen();
            return data.length;
        }
    }

    @Override
    public SeekableByteChannel truncate(long size) {
        throw new NonWritableChannelException();
    }

    @Override
    public boolean isOpen() {
        synchronized (lock) {
            return open;
        }
    }

    @Override
    public void close() {
        synchronized (lock) {
            open = false;
        }
    }

    private void checkOpen() throws ClosedChannelException {
        if (!open) {
            throw new ClosedChannelException();
        }
    }
}
