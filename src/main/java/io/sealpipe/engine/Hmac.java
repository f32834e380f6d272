package io.sealpipe.engine;

import java.nio.ByteBuffer;

/** A keyed MAC computed incrementally; {@link #doFinal} restarts it for the next message. */
public interface Hmac extends AutoCloseable {

    /** Length of the MAC in bytes (32 for HMAC-SHA256). */
    int macLength();

    void update(byte[] in, int offset, int length);

    /** Consumes the remaining bytes of {@code in}. */
    void update(ByteBuffer in);

    /** Writes the MAC of everything updated since the last call and starts a new message. */
    void doFinal(byte[] out, int offset);

    @Override
    void close();
}
