package io.sealpipe.internal;

import io.sealpipe.engine.Hmac;
import java.nio.ByteBuffer;

/**
 * Argument checking shared by every engine's HMAC-SHA256. Calls are counted
 * ({@link InFlightCalls}) so that {@code close()} from another thread defers releasing the
 * engine until no call runs on it.
 */
public abstract class BaseHmac implements Hmac {
    private final String name;
    private final InFlightCalls calls;

    protected BaseHmac(String name) {
        this.name = name;
        this.calls = new InFlightCalls(name, this::engineClose);
    }

    @Override
    public final int macLength() {
        return 32;
    }

    @Override
    public final void update(byte[] in, int offset, int length) {
        calls.enter();
        try {
            Checks.range("input", in, offset, length);
            if (length > 0) {
                engineUpdate(in, offset, length);
            }
        } finally {
            calls.leave();
        }
    }

    @Override
    public final void update(ByteBuffer in) {
        calls.enter();
        try {
            int length = in.remaining();
            if (length == 0) {
                return;
            }
            if (Buffers.accessible(in)) {
                engineUpdate(Buffers.base(in), Buffers.offset(in), length);
            } else {
                engineUpdate(Buffers.remainingCopy(in), 0, length);
            }
            Buffers.skip(in, length);
        } finally {
            calls.leave();
        }
    }

    @Override
    public final void doFinal(byte[] out, int offset) {
        calls.enter();
        try {
            Checks.range("output", out, offset, macLength());
            engineDoFinal(out, offset);
        } finally {
            calls.leave();
        }
    }

    /** Idempotent; returns at once, and the engine is released when no call runs on it any more. */
    @Override
    public final void close() {
        calls.close();
    }

    protected abstract void engineUpdate(Object in, int offset, int length);

    protected abstract void engineDoFinal(byte[] out, int offset);

    /** Releases the context; called once, never while another method of this object runs. */
    protected abstract void engineClose();

    @Override
    public String toString() {
        return name + (calls.isClosed() ? " (closed)" : "");
    }
}
