package io.sealpipe.fuzz;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * The fuzz targets' input read as a little program: unsigned big-endian fields from the front,
 * zeros once it is used up, so every byte string is a valid input. Not Jazzer's
 * {@code FuzzedDataProvider}: its encoding is Jazzer's own, and the seeds here are written by
 * {@link Writer} in this one, so that {@link FuzzSeeds} can say "truncate at 16456" in bytes a
 * reader can check.
 */
final class FuzzInput {
    private final byte[] data;
    private int pos;

    FuzzInput(byte[] data) {
        this.data = data;
    }

    boolean hasMore() {
        return pos < data.length;
    }

    int u8() {
        return pos < data.length ? data[pos++] & 0xff : 0;
    }

    int u16() {
        return u8() << 8 | u8();
    }

    /** A non-negative int (31 bits). */
    int u31() {
        return (u16() << 16 | u16()) & Integer.MAX_VALUE;
    }

    /** Up to {@code n} bytes, fewer at the end of the input. */
    byte[] bytes(int n) {
        int k = Math.min(n, data.length - pos);
        byte[] b = Arrays.copyOfRange(data, pos, pos + k);
        pos += k;
        return b;
    }

    /** A byte string of up to 65535 bytes, its length first. */
    byte[] blob() {
        return bytes(u16());
    }

    /** The encoder of the same fields, for the seeds. */
    static final class Writer {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Writer u8(int v) {
            check(v, 0xff);
            out.write(v);
            return this;
        }

        Writer u16(int v) {
            check(v, 0xffff);
            return u8(v >>> 8).u8(v & 0xff);
        }

        Writer u31(int v) {
            check(v, Integer.MAX_VALUE);
            return u16(v >>> 16).u16(v & 0xffff);
        }

        Writer bytes(byte[] b) {
            out.writeBytes(b);
            return this;
        }

        Writer blob(byte[] b) {
            return u16(b.length).bytes(b);
        }

        byte[] toByteArray() {
            return out.toByteArray();
        }

        private static void check(int v, int max) {
            if (v < 0 || v > max) {
                throw new IllegalArgumentException("field value must be 0.." + max + ", not " + v);
            }
        }
    }
}
