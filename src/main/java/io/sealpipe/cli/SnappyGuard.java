package io.sealpipe.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Objects;

/**
 * A decrypted stream that refuses to pass on a Snappy framed stream: {@code decrypt} of a file
 * written with {@code --compress snappy} but read without it would otherwise write the compressed
 * frames as if they were the plaintext, with exit 0. Such a stream starts with the framing
 * format's stream identifier, {@code ff 06 00 00 "sNaPpY"}. The first read takes those 10 bytes
 * (or all there are) before it returns any, so a refused stream gives its reader nothing.
 * {@code --raw} leaves this layer out.
 */
final class SnappyGuard extends InputStream {
    static final byte[] STREAM_IDENTIFIER = {(byte) 0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y'};

    private final InputStream in;
    private byte[] head; // the first bytes, read ahead for the check and returned first
    private int headPos;
    private final byte[] one = new byte[1];

    /** The refusal: the plaintext is a Snappy framed stream. */
    static final class CompressedException extends IOException {
        private static final long serialVersionUID = 1L;

        CompressedException() {
            super("this stream is compressed: add --compress snappy to decompress it"
                    + " (or --raw to write the decrypted bytes as they are)");
        }
    }

    SnappyGuard(InputStream in) {
        this.in = in;
    }

    @Override
    public int read() throws IOException {
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        if (head == null) {
            head = in.readNBytes(STREAM_IDENTIFIER.length);
        }
        if (Arrays.equals(head, STREAM_IDENTIFIER)) {
            throw new CompressedException();
        }
        if (headPos < head.length) {
            int n = Math.min(len, head.length - headPos);
            System.arraycopy(head, headPos, b, off, n);
            headPos += n;
            return n;
        }
        return in.read(b, off, len);
    }

    @Override
    public int available() throws IOException {
        return head == null ? 0 : head.length - headPos + in.available();
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
