package io.sealpipe.internal;

import io.sealpipe.engine.AeadCipher;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import javax.crypto.AEADBadTagException;

/** Argument checking and buffer handling shared by every engine's AES-GCM. */
public abstract class BaseAeadCipher implements AeadCipher {
    private final String name;
    private boolean closed;

    protected BaseAeadCipher(String name) {
        this.name = name;
    }

    @Override
    public final int seal(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset) {
        checkOpen();
        Checks.length("nonce", nonce, NONCE_LENGTH);
        Checks.range("input", in, inOffset, length);
        Checks.range("output", out, outOffset, sealedLength(length));
        Checks.noPartialOverlap(in, inOffset, out, outOffset, length);
        return engineSeal(nonce, aad, in, inOffset, length, out, outOffset);
    }

    @Override
    public final int seal(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out) {
        checkOpen();
        Checks.length("nonce", nonce, NONCE_LENGTH);
        int length = in.remaining();
        checkRoom(out, sealedLength(length));
        int n = Buffers.accessible(in)
                ? engineSeal(nonce, aad, Buffers.base(in), Buffers.offset(in), length, Buffers.base(out), Buffers.offset(out))
                : engineSeal(nonce, aad, Buffers.remainingCopy(in), 0, length, Buffers.base(out), Buffers.offset(out));
        Buffers.skip(in, length);
        Buffers.skip(out, n);
        return n;
    }

    @Override
    public final int open(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset)
            throws AEADBadTagException {
        checkOpen();
        Checks.length("nonce", nonce, NONCE_LENGTH);
        Checks.range("input", in, inOffset, length);
        checkSealedLength(length);
        Checks.range("output", out, outOffset, length - TAG_LENGTH);
        Checks.noPartialOverlap(in, inOffset, out, outOffset, length - TAG_LENGTH);
        return engineOpen(nonce, aad, in, inOffset, length, out, outOffset);
    }

    @Override
    public final int open(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out) throws AEADBadTagException {
        checkOpen();
        Checks.length("nonce", nonce, NONCE_LENGTH);
        int length = in.remaining();
        checkSealedLength(length);
        checkRoom(out, length - TAG_LENGTH);
        int n = Buffers.accessible(in)
                ? engineOpen(nonce, aad, Buffers.base(in), Buffers.offset(in), length, Buffers.base(out), Buffers.offset(out))
                : engineOpen(nonce, aad, Buffers.remainingCopy(in), 0, length, Buffers.base(out), Buffers.offset(out));
        Buffers.skip(in, length);
        Buffers.skip(out, n);
        return n;
    }

    @Override
    public final void close() {
        if (!closed) {
            closed = true;
            engineClose();
        }
    }

    private static int sealedLength(int length) {
        if (length < 0 || length > Integer.MAX_VALUE - TAG_LENGTH) {
            throw new IllegalArgumentException("plaintext length " + length + " out of range");
        }
        return length + TAG_LENGTH;
    }

    private static void checkSealedLength(int length) throws AEADBadTagException {
        if (length < TAG_LENGTH) {
            throw new AEADBadTagException(
                    "ciphertext of " + length + " bytes is shorter than the 16-byte tag");
        }
    }

    private static void checkRoom(ByteBuffer out, int needed) {
        if (out.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        if (out.remaining() < needed) {
            throw new IllegalArgumentException(
                    "output has room for " + out.remaining() + " bytes but needs " + needed);
        }
    }

    protected final void checkOpen() {
        if (closed) {
            throw new IllegalStateException(name + " is closed");
        }
    }

    /** Seals; {@code in}/{@code out} are byte[] or direct ByteBuffer, ranges checked. */
    protected abstract int engineSeal(byte[] nonce, byte[] aad, Object in, int inOffset, int length,
            Object out, int outOffset);

    /** Opens; on a bad tag throws and leaves no plaintext in {@code out}. */
    protected abstract int engineOpen(byte[] nonce, byte[] aad, Object in, int inOffset, int length,
            Object out, int outOffset) throws AEADBadTagException;

    protected abstract void engineClose();

    @Override
    public String toString() {
        return name + (closed ? " (closed)" : "");
    }
}
