package io.sealpipe.engine;

import java.nio.ByteBuffer;
import javax.crypto.AEADBadTagException;

/**
 * An AES-GCM cipher that passes every call to a real one: the base of the test engines that
 * count ciphers or hook their calls ({@code HookedEngine}, the soak's {@code CountingEngine}),
 * which override only what they add.
 */
public class ForwardingAeadCipher implements AeadCipher {
    protected final AeadCipher real;

    public ForwardingAeadCipher(AeadCipher real) {
        this.real = real;
    }

    @Override
    public int seal(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset) {
        return real.seal(nonce, aad, in, inOffset, length, out, outOffset);
    }

    @Override
    public int seal(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out) {
        return real.seal(nonce, aad, in, out);
    }

    @Override
    public int open(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset)
            throws AEADBadTagException {
        return real.open(nonce, aad, in, inOffset, length, out, outOffset);
    }

    @Override
    public int open(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out) throws AEADBadTagException {
        return real.open(nonce, aad, in, out);
    }

    @Override
    public void sealChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out,
            int outOffset) {
        real.sealChunks(baseNonce, firstChunk, in, inOffset, count, out, outOffset);
    }

    @Override
    public int openChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out,
            int outOffset) {
        return real.openChunks(baseNonce, firstChunk, in, inOffset, count, out, outOffset);
    }

    @Override
    public int openChunks(byte[] baseNonce, long firstChunk, ByteBuffer in, ByteBuffer out) {
        return real.openChunks(baseNonce, firstChunk, in, out);
    }

    @Override
    public void close() {
        real.close();
    }
}
