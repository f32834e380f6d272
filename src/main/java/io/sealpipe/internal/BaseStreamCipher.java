package io.sealpipe.internal;

import io.sealpipe.engine.StreamCipher;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Arrays;

/**
 * Argument checking and buffer handling shared by every engine's CTR/CFB cipher; subclasses
 * implement the transformation on a byte[] or direct ByteBuffer ({@link Buffers}). Calls are
 * counted ({@link InFlightCalls}) so that {@code close()} from another thread defers releasing
 * the engine until no call runs on it.
 */
public abstract class BaseStreamCipher implements StreamCipher {
    private static final int SCRATCH_SIZE = 16 * 1024;

    private final String name;
    private final InFlightCalls calls;
    private byte[] scratch;

    protected BaseStreamCipher(String name) {
        this.name = name;
        this.calls = new InFlightCalls(name, this::release);
    }

    @Override
    public final void reset(byte[] iv) {
        calls.enter();
        try {
            Checks.length("iv", iv, 16);
            engineReset(iv);
        } finally {
            calls.leave();
        }
    }

    @Override
    public final int update(byte[] in, int inOffset, int length, byte[] out, int outOffset) {
        calls.enter();
        try {
            Checks.range("input", in, inOffset, length);
            Checks.range("output", out, outOffset, length);
            Checks.noPartialOverlap(in, inOffset, out, outOffset, length);
            if (length > 0) {
                engineUpdate(in, inOffset, out, outOffset, length);
            }
            return length;
        } finally {
            calls.leave();
        }
    }

    @Override
    public final int update(ByteBuffer in, ByteBuffer out) {
        calls.enter();
        try {
            return updateBuffers(in, out);
        } finally {
            calls.leave();
        }
    }

    private int updateBuffers(ByteBuffer in, ByteBuffer out) {
        int length = in.remaining();
        if (out.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        if (out.remaining() < length) {
            throw new IllegalArgumentException("output has room for " + out.remaining()
                    + " bytes but input has " + length);
        }
        if (length == 0) {
            return 0;
        }
        if (Buffers.accessible(in)) {
            Buffers.checkOverlap(Buffers.base(in), Buffers.offset(in), length, Buffers.base(out), Buffers.offset(out),
                    length, true, this::directAddress);
            engineUpdate(Buffers.base(in), Buffers.offset(in), Buffers.base(out), Buffers.offset(out), length);
            Buffers.skip(in, length);
            Buffers.skip(out, length);
        } else {
            // A read-only heap buffer: copy through a scratch array, slice by slice.
            if (scratch == null) {
                scratch = new byte[SCRATCH_SIZE];
            }
            while (in.hasRemaining()) {
                int n = Math.min(in.remaining(), scratch.length);
                in.get(scratch, 0, n);
                engineUpdate(scratch, 0, scratch, 0, n);
                out.put(scratch, 0, n);
            }
        }
        return length;
    }

    /** Idempotent; returns at once, and the engine is released when no call runs on it any more. */
    @Override
    public final void close() {
        calls.close();
    }

    /** Runs once, when closed and no call is in flight. */
    private void release() {
        if (scratch != null) {
            Arrays.fill(scratch, (byte) 0);
        }
        engineClose();
    }

    /**
     * The address of a direct buffer's memory, for the check that input and output do not
     * overlap ({@link Buffers#checkOverlap}), which never writes either. By default
     * {@link Buffers#address}: read by libsealpipe or JNA, whichever has loaded, else through
     * {@code sun.misc.Unsafe}, or -1 where that is unavailable too, and then two direct buffers
     * that may share memory are not compared.
     */
    protected long directAddress(ByteBuffer direct) {
        return Buffers.address(direct);
    }

    /** Starts again at {@code iv} (16 bytes, checked). */
    protected abstract void engineReset(byte[] iv);

    /**
     * Transforms {@code length > 0} bytes; {@code in} and {@code out} are each a byte[] or a
     * direct ByteBuffer, with absolute offsets already checked.
     */
    protected abstract void engineUpdate(Object in, int inOffset, Object out, int outOffset, int length);

    /** Releases the context; called once, never while another method of this object runs. */
    protected abstract void engineClose();

    @Override
    public String toString() {
        return name + (calls.isClosed() ? " (closed)" : "");
    }
}
