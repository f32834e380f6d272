package io.sealpipe.internal;

import io.sealpipe.engine.AeadCipher;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import javax.crypto.AEADBadTagException;

/**
 * Argument checking and buffer handling shared by every engine's AES-GCM. Calls are counted
 * ({@link InFlightCalls}) so that {@code close()} from another thread defers releasing the
 * engine until no call runs on it, and a failed open, whatever failed, leaves its output zeroed.
 */
public abstract class BaseAeadCipher implements AeadCipher {
    /** The chunk format's limit on chunk indices (c2sp.org/chunked-encryption). */
    public static final long MAX_CHUNKS = 1L << 38;

    private final String name;
    private final byte[] chunkNonce = new byte[NONCE_LENGTH];
    private final InFlightCalls calls;

    protected BaseAeadCipher(String name) {
        this.name = name;
        this.calls = new InFlightCalls(name, this::engineClose);
    }

    @Override
    public final int seal(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset) {
        calls.enter();
        try {
            Checks.length("nonce", nonce, NONCE_LENGTH);
            Checks.range("input", in, inOffset, length);
            Checks.range("output", out, outOffset, sealedLength(length));
            Checks.noPartialOverlap(in, inOffset, out, outOffset, length);
            return engineSeal(nonce, aad, in, inOffset, length, out, outOffset);
        } finally {
            calls.leave();
        }
    }

    @Override
    public final int seal(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out) {
        calls.enter();
        try {
            Checks.length("nonce", nonce, NONCE_LENGTH);
            int length = in.remaining();
            checkRoom(out, sealedLength(length));
            Input src = input(in, length, out);
            int n = engineSeal(nonce, aad, src.base(), src.offset(), length, Buffers.base(out), Buffers.offset(out));
            Buffers.skip(in, length);
            Buffers.skip(out, n);
            return n;
        } finally {
            calls.leave();
        }
    }

    @Override
    public final int open(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset)
            throws AEADBadTagException {
        calls.enter();
        try {
            Checks.length("nonce", nonce, NONCE_LENGTH);
            Checks.range("input", in, inOffset, length);
            checkSealedLength(length);
            Checks.range("output", out, outOffset, length - TAG_LENGTH);
            Checks.noPartialOverlap(in, inOffset, out, outOffset, length - TAG_LENGTH);
            return openOrWipe(nonce, aad, in, inOffset, length, out, outOffset);
        } finally {
            calls.leave();
        }
    }

    @Override
    public final int open(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out) throws AEADBadTagException {
        calls.enter();
        try {
            Checks.length("nonce", nonce, NONCE_LENGTH);
            int length = in.remaining();
            checkSealedLength(length);
            checkRoom(out, length - TAG_LENGTH);
            Input src = input(in, length - TAG_LENGTH, out);
            int n = openOrWipe(nonce, aad, src.base(), src.offset(), length, Buffers.base(out), Buffers.offset(out));
            Buffers.skip(in, length);
            Buffers.skip(out, n);
            return n;
        } finally {
            calls.leave();
        }
    }

    /** An input as the engines take it: a byte[] or direct ByteBuffer and an absolute offset. */
    private record Input(Object base, int offset) {}

    /**
     * {@code in}'s bytes for a single seal or open: its own memory, checked against {@code out}
     * for overlap over {@code dataLength} bytes (in place is fine), or a copy of a read-only heap
     * buffer, which exposes no array.
     */
    private Input input(ByteBuffer in, int dataLength, ByteBuffer out) {
        if (!Buffers.accessible(in)) {
            return new Input(Buffers.remainingCopy(in), 0);
        }
        Buffers.checkOverlap(Buffers.base(in), Buffers.offset(in), dataLength, Buffers.base(out), Buffers.offset(out),
                dataLength, true, this::directAddress);
        return new Input(Buffers.base(in), Buffers.offset(in));
    }

    /**
     * {@link #engineOpen}, wiping the output when it throws: engines wipe on a bad tag, but a
     * provider or OpenSSL failure after some plaintext was written would otherwise release it
     * unauthenticated. Not when the engine refused its arguments before writing anything (the
     * output may then be memory the caller still needs, such as an overlapping input).
     */
    private int openOrWipe(byte[] nonce, byte[] aad, Object in, int inOffset, int length, Object out, int outOffset)
            throws AEADBadTagException {
        try {
            return engineOpen(nonce, aad, in, inOffset, length, out, outOffset);
        } catch (Throwable t) {
            if (!refusedArguments(t)) {
                Buffers.wipe(out, outOffset, length - TAG_LENGTH);
            }
            throw t;
        }
    }

    @Override
    public final void sealChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out,
            int outOffset) {
        calls.enter();
        try {
            checkChunks(baseNonce, firstChunk, count);
            Checks.range("input", in, inOffset, count * CHUNK_SIZE);
            Checks.range("output", out, outOffset, count * SEALED_CHUNK_SIZE);
            checkNoOverlap(in, inOffset, count * CHUNK_SIZE, out, outOffset, count * SEALED_CHUNK_SIZE);
            if (count > 0) {
                engineSealChunks(baseNonce, firstChunk, in, inOffset, count, out, outOffset);
            }
        } finally {
            calls.leave();
        }
    }

    @Override
    public final int openChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out,
            int outOffset) {
        calls.enter();
        try {
            checkChunks(baseNonce, firstChunk, count);
            Checks.range("input", in, inOffset, count * SEALED_CHUNK_SIZE);
            Checks.range("output", out, outOffset, count * CHUNK_SIZE);
            checkNoOverlap(in, inOffset, count * SEALED_CHUNK_SIZE, out, outOffset, count * CHUNK_SIZE);
            return count == 0 ? 0 : openChunksOrWipe(baseNonce, firstChunk, in, inOffset, count, out, outOffset);
        } finally {
            calls.leave();
        }
    }

    @Override
    public final int openChunks(byte[] baseNonce, long firstChunk, ByteBuffer in, ByteBuffer out) {
        calls.enter();
        try {
            return openChunkBuffers(baseNonce, firstChunk, in, out);
        } finally {
            calls.leave();
        }
    }

    private int openChunkBuffers(byte[] baseNonce, long firstChunk, ByteBuffer in, ByteBuffer out) {
        int length = in.remaining();
        if (length % SEALED_CHUNK_SIZE != 0) {
            throw new IllegalArgumentException("input must be whole sealed chunks of " + SEALED_CHUNK_SIZE
                    + " bytes, not " + length + " bytes");
        }
        int count = length / SEALED_CHUNK_SIZE;
        checkChunks(baseNonce, firstChunk, count);
        checkRoom(out, count * CHUNK_SIZE);
        if (count == 0) {
            return 0;
        }
        if (Buffers.accessible(in)) {
            Buffers.checkOverlap(Buffers.base(in), Buffers.offset(in), length, Buffers.base(out), Buffers.offset(out),
                    count * CHUNK_SIZE, false, this::directAddress);
        }
        int opened = Buffers.accessible(in)
                ? openChunksOrWipe(baseNonce, firstChunk, Buffers.base(in), Buffers.offset(in), count,
                        Buffers.base(out), Buffers.offset(out))
                : openChunksOrWipe(baseNonce, firstChunk, Buffers.remainingCopy(in), 0, count,
                        Buffers.base(out), Buffers.offset(out));
        Buffers.skip(in, opened * SEALED_CHUNK_SIZE);
        Buffers.skip(out, opened * CHUNK_SIZE);
        return opened;
    }

    /**
     * {@link #engineOpenChunks}, wiping all {@code count} chunks of output when it throws: the
     * caller then cannot tell which of them were authenticated.
     */
    private int openChunksOrWipe(byte[] baseNonce, long firstChunk, Object in, int inOffset, int count, Object out,
            int outOffset) {
        try {
            return engineOpenChunks(baseNonce, firstChunk, in, inOffset, count, out, outOffset);
        } catch (Throwable t) {
            if (!refusedArguments(t)) {
                Buffers.wipe(out, outOffset, count * CHUNK_SIZE);
            }
            throw t;
        }
    }

    private void checkChunks(byte[] baseNonce, long firstChunk, int count) {
        Checks.length("baseNonce", baseNonce, NONCE_LENGTH);
        if (count < 0 || count > Integer.MAX_VALUE / SEALED_CHUNK_SIZE) {
            throw new IllegalArgumentException("chunk count must be 0.." + Integer.MAX_VALUE / SEALED_CHUNK_SIZE
                    + ", not " + count);
        }
        if (firstChunk < 0 || firstChunk > MAX_CHUNKS - count) {
            throw new IllegalArgumentException("chunks " + firstChunk + ".." + (firstChunk + count - 1)
                    + " are outside 0..2^38-1, the format's limit");
        }
    }

    /** An engine's refusal of its arguments, thrown before it writes anything. */
    private static boolean refusedArguments(Throwable t) {
        return t instanceof IllegalArgumentException || t instanceof IndexOutOfBoundsException
                || t instanceof NullPointerException || t instanceof ReadOnlyBufferException;
    }

    private static void checkNoOverlap(Object in, int inOffset, int inLength, Object out, int outOffset, int outLength) {
        if (in == out && inOffset < outOffset + outLength && outOffset < inOffset + inLength) {
            throw new IllegalArgumentException("input and output overlap");
        }
    }

    /**
     * Seals full chunks one {@link #engineSeal} call each, with the nonces computed here;
     * engines that can do all of them in one call override this.
     */
    protected void engineSealChunks(byte[] baseNonce, long firstChunk, Object in, int inOffset, int count, Object out,
            int outOffset) {
        for (int i = 0; i < count; i++) {
            engineSeal(nonceOfChunk(baseNonce, firstChunk + i), null, in, inOffset + i * CHUNK_SIZE, CHUNK_SIZE, out, outOffset + i * SEALED_CHUNK_SIZE);
        }
    }

    /**
     * Opens full chunks one {@link #engineOpen} call each; see {@link #engineSealChunks}.
     * Returns at the first chunk that fails its tag, with that chunk's output zeroed.
     */
    protected int engineOpenChunks(byte[] baseNonce, long firstChunk, Object in, int inOffset, int count, Object out,
            int outOffset) {
        for (int i = 0; i < count; i++) {
            try {
                openOrWipe(nonceOfChunk(baseNonce, firstChunk + i), null, in, inOffset + i * SEALED_CHUNK_SIZE,
                        SEALED_CHUNK_SIZE, out, outOffset + i * CHUNK_SIZE);
            } catch (AEADBadTagException e) {
                return i;
            }
        }
        return count;
    }

    /** The nonce of chunk {@code index} (base nonce XOR the big-endian index), in an array reused by every call. */
    protected final byte[] nonceOfChunk(byte[] baseNonce, long index) {
        System.arraycopy(baseNonce, 0, chunkNonce, 0, NONCE_LENGTH);
        for (int i = 0; i < 8; i++) {
            chunkNonce[NONCE_LENGTH - 1 - i] ^= (byte) (index >>> (8 * i));
        }
        return chunkNonce;
    }

    /** Idempotent; returns at once, and the engine is released when no call runs on it any more. */
    @Override
    public final void close() {
        calls.close();
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

    /** Seals; {@code in}/{@code out} are byte[] or direct ByteBuffer, ranges checked. */
    protected abstract int engineSeal(byte[] nonce, byte[] aad, Object in, int inOffset, int length,
            Object out, int outOffset);

    /**
     * Opens; on a bad tag throws AEADBadTagException. Whatever it throws, the caller then zeroes
     * the {@code length - 16} bytes of {@code out}.
     */
    protected abstract int engineOpen(byte[] nonce, byte[] aad, Object in, int inOffset, int length,
            Object out, int outOffset) throws AEADBadTagException;

    /** Releases the context; called once, never while another method of this object runs. */
    protected abstract void engineClose();

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

    @Override
    public String toString() {
        return name + (calls.isClosed() ? " (closed)" : "");
    }
}
