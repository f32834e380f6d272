package io.sealpipe.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/** Deterministic keys and data, and GCM nonces that never repeat within a trial. */
final class Fixtures {
    private Fixtures() {}

    /** AES-256 everywhere: the key size sealpipe's stream formats use. */
    static final int KEY_LENGTH = 32;

    /** {@code n} pseudo-random bytes from a fixed seed, so every run encrypts the same data. */
    static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    /**
     * 12-byte nonces: a fixed 4-byte prefix, then a big-endian 64-bit counter incremented on
     * every {@link #next()}. SunJCE refuses to encrypt twice in a row with one key and nonce, and
     * a repeated nonce is never a realistic workload, so each seal takes a fresh one.
     */
    static final class Nonces {
        private static final VarHandle LONG_BE =
                MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

        private final byte[] nonce = {0x5e, (byte) 0xa1, 0x0b, 0x1e, 0, 0, 0, 0, 0, 0, 0, 0};
        private long counter;

        /**
         * The next nonce, in an array reused by every call: engines copy the nonce and keep no
         * reference to it (AeadCipher's contract), so the benchmark allocates nothing here.
         */
        byte[] next() {
            LONG_BE.set(nonce, 4, ++counter);
            return nonce;
        }
    }
}
