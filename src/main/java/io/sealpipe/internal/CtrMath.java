package io.sealpipe.internal;

/**
 * Counter arithmetic of Hadoop-style AES-CTR streams: the counter block for stream position
 * {@code p} is IV + p / 16, added as a 128-bit big-endian integer with carry through all 16
 * bytes (wrapping at 2^128), and the first {@code p % 16} bytes of its keystream are skipped.
 */
public final class CtrMath {
    private CtrMath() {}

    /** Writes IV + blocks (blocks taken as unsigned) into {@code out}, 16 bytes. */
    public static void counterBlock(byte[] iv, long blocks, byte[] out) {
        int carry = 0;
        for (int i = 15; i >= 0; i--) {
            int add = i >= 8 ? (int) (blocks >>> (8 * (15 - i))) & 0xff : 0;
            int sum = (iv[i] & 0xff) + add + carry;
            out[i] = (byte) sum;
            carry = sum >>> 8;
        }
    }
}
