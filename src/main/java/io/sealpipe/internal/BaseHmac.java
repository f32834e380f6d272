package io.sealpipe.internal;

import io.sealpipe.engine.Hmac;
import java.nio.ByteBuffer;

/** Argument checking shared by every engine's HMAC-SHA256. */
public abstract class BaseHmac implements Hmac {
    private final String name;
    private boolean closed;

    protected BaseHmac(String name) {
        this.name = name;
    }

    @Override
    public final int macLength() {
        return 32;
    }

    @Override
    public final void update(byte[] in, int offset, int length) {
        checkOpen();
        Checks.range("input", in, offset, length);
        if (length > 0) {
            engineUpdate(in, offset, length);
        }
    }

    @Override
    public final void update(ByteBuffer in) {
        checkOpen();
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
    }

    @Override
    public final void doFinal(byte[] out, int offset) {
        checkOpen();
        Checks.range("output", out, offset, macLength());
        engineDoFinal(out, offset);
    }

    @Override
    public final void close() {
        if (!closed) {
            closed = true;
            engineClose();
        }
    }

    protected final void checkOpen() {
        if (closed) {
            throw new IllegalStateException(name + " is closed");
        }
    }

    protected abstract void engineUpdate(Object in, int offset, int length);

    protected abstract void engineDoFinal(byte[] out, int offset);

    protected abstract void engineClose();

    @Override
    public String toString() {
        return name + (closed ? " (closed)" : "");
    }
}
