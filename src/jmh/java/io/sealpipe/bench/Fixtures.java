package io.sealpipe.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * Deterministic keys and data, GCM nonces that never repeat within a trial, and the
 * allocation-free sink and source the stream benchmarks wrap.
 */
final class Fixtures {
    private Fixtures() {}

    /**
     * The Amazon Corretto Crypto Provider (AWS-LC through JNI), a baseline; fails the trial with
     * the reason if its native library does not load here.
     */
    static java.security.Provider accp() {
        com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider p =
                com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider.INSTANCE;
        if (p.getLoadingError() != null) {
            throw new IllegalStateException("ACCP did not load: " + p.getLoadingError(), p.getLoadingError());
        }
        return p;
    }

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

    /** Reads exactly {@code length} bytes into {@code b}, with {@code read} calls until they have arrived. */
    static void readFully(InputStream in, byte[] b, int length) throws IOException {
        for (int done = 0; done < length; ) {
            int n = in.read(b, done, length - done);
            if (n < 0) {
                throw new IllegalStateException("the replayed source never ends, yet read returned -1");
            }
            done += n;
        }
    }

    /**
     * An OutputStream that discards what is written and only counts it: no copy, no allocation,
     * so a stream benchmark measures the stream and not its destination.
     */
    static final class DiscardingSink extends OutputStream {
        private long count;

        @Override
        public void write(int b) {
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            Objects.checkFromIndexSize(off, len, b.length);
            count += len;
        }

        /** Bytes written so far. */
        long count() {
            return count;
        }
    }

    /**
     * An endless InputStream that replays one byte[] (a pre-encrypted ciphertext) again and
     * again: each read copies up to the end of the array, then the next starts at its beginning.
     * It never allocates and never ends, so a long-lived decrypting stream over it reads in
     * steady state. After the first lap the decrypted bytes are no longer the original plaintext
     * (the keystream runs on, the ciphertext restarts), which does not change the work done.
     */
    static final class ReplaySource extends InputStream {
        private final byte[] data;
        private int pos;

        ReplaySource(byte[] data) {
            if (data.length == 0) {
                throw new IllegalArgumentException("data must not be empty");
            }
            this.data = data;
        }

        @Override
        public int read() {
            int b = data[pos] & 0xff;
            pos = pos + 1 == data.length ? 0 : pos + 1;
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            int n = Math.min(len, data.length - pos);
            System.arraycopy(data, pos, b, off, n);
            pos = pos + n == data.length ? 0 : pos + n;
            return n;
        }

        @Override
        public int available() {
            return data.length - pos;
        }

        /** Starts the next read at the first byte again. */
        void rewind() {
            pos = 0;
        }
    }

    /**
     * An unsynchronized InputStream over an array, read once and then {@link #rewind() rewound}
     * for the next stream (ByteArrayInputStream's methods are synchronized).
     */
    static final class ArraySource extends InputStream {
        private final byte[] data;
        private int pos;

        ArraySource(byte[] data) {
            this.data = data;
        }

        void rewind() {
            pos = 0;
        }

        @Override
        public int read() {
            return pos < data.length ? data[pos++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (len == 0) {
                return 0;
            }
            if (pos == data.length) {
                return -1;
            }
            int n = Math.min(len, data.length - pos);
            System.arraycopy(data, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public void close() {
            // the array stays: the next stream reads it again
        }
    }
}
