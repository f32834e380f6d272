package io.sealpipe.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/** Where an output stream writes ciphertext to: an OutputStream or a WritableByteChannel. */
public abstract class CiphertextSink implements AutoCloseable {

    /** Writes all of b[off, off + len). */
    public abstract void write(byte[] b, int off, int len) throws IOException;

    public abstract void flush() throws IOException;

    @Override
    public abstract void close() throws IOException;

    public static CiphertextSink of(OutputStream out) {
        return new CiphertextSink() {
            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                out.write(b, off, len);
            }

            @Override
            public void flush() throws IOException {
                out.flush();
            }

            @Override
            public void close() throws IOException {
                out.close();
            }
        };
    }

    public static CiphertextSink of(WritableByteChannel out) {
        return new CiphertextSink() {
            private ByteBuffer view;
            private byte[] viewArray;

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                if (viewArray != b) {
                    view = ByteBuffer.wrap(b);
                    viewArray = b;
                }
                view.limit(off + len).position(off);
                while (view.hasRemaining()) {
                    out.write(view);
                }
            }

            @Override
            public void flush() {
                // channels have nothing to flush
            }

            @Override
            public void close() throws IOException {
                out.close();
            }
        };
    }
}
