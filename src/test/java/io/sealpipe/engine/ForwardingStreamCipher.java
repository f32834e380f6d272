package io.sealpipe.engine;

import java.nio.ByteBuffer;

/**
 * A stream cipher (AES-CTR) that passes every call to a real one: the base of the test engines
 * that count ciphers ({@code HookedEngine}, the soak's {@code CountingEngine}), which override
 * only what they add.
 */
public class ForwardingStreamCipher implements StreamCipher {
    protected final StreamCipher real;

    public ForwardingStreamCipher(StreamCipher real) {
        this.real = real;
    }

    @Override
    public void reset(byte[] iv) {
        real.reset(iv);
    }

    @Override
    public int update(byte[] in, int inOffset, int length, byte[] out, int outOffset) {
        return real.update(in, inOffset, length, out, outOffset);
    }

    @Override
    public int update(ByteBuffer in, ByteBuffer out) {
        return real.update(in, out);
    }

    @Override
    public void close() {
        real.close();
    }
}
