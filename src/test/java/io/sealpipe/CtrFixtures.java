package io.sealpipe;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;

/**
 * Shared fixtures of the CTR stream tests: seeded data, the IVs whose counter carries, a
 * reference AES-CTR written here from AES-ECB and {@link BigInteger} (it shares no code with
 * {@code CtrMath} or any engine), an in-memory {@link SeekableByteChannel}, and streams that fail
 * on request.
 */
public final class CtrFixtures {
    private CtrFixtures() {}

    public static final HexFormat HEX = HexFormat.of();
    public static final BigInteger TWO_128 = BigInteger.ONE.shiftLeft(128);

    /** IVs by name: a plain one and three whose counter carries early in the stream. */
    public static Map<String, byte[]> ivs() {
        Map<String, byte[]> ivs = new LinkedHashMap<>();
        ivs.put("random", HEX.parseHex("0f1e2d3c4b5a69788796a5b4c3d2e1f0"));
        // Wraps through 2^128 to 00..00 after the first block.
        ivs.put("all-ff", HEX.parseHex("ffffffffffffffffffffffffffffffff"));
        // Low 64 bits ff..ff: the second block carries into byte 7 (a long-only counter breaks here).
        ivs.put("low64-ff", HEX.parseHex("0123456789abcdefffffffffffffffff"));
        // Low 32 bits ff..fe: carries into byte 11 after two blocks (a 32-bit counter breaks here).
        ivs.put("low32-fffffffe", HEX.parseHex("00112233445566778899aabbfffffffe"));
        return ivs;
    }

    public static byte[] bytes(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    public static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    public static byte[] key(int length) {
        return bytes(0x5EA1L + length, length);
    }

    public static CtrStreams.Builder builder(EngineKind kind, byte[] key, byte[] iv) {
        return CtrStreams.builder().engine(TestEngines.engine(kind)).key(key).iv(iv);
    }

    /**
     * The reference: the byte at stream position p is {@code data[i] ^ AES(key, IV + p / 16)[p % 16]}
     * where p = streamOffset + i and the addition is modulo 2^128.
     */
    public static byte[] referenceCtr(byte[] key, byte[] iv, long streamOffset, byte[] data) {
        try {
            Cipher ecb = Cipher.getInstance("AES/ECB/NoPadding");
            ecb.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
            BigInteger base = new BigInteger(1, iv);
            byte[] out = new byte[data.length];
            byte[] keystream = null;
            long block = -1;
            for (int i = 0; i < data.length; i++) {
                long p = streamOffset + i;
                if (p >>> 4 != block) {
                    block = p >>> 4;
                    keystream = ecb.doFinal(counter(base, block));
                }
                out[i] = (byte) (data[i] ^ keystream[(int) (p & 15)]);
            }
            return out;
        } catch (GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }

    /** IV + blocks mod 2^128 as 16 big-endian bytes, by BigInteger. */
    public static byte[] counter(BigInteger iv, long blocks) {
        BigInteger sum = iv.add(BigInteger.valueOf(blocks)).mod(TWO_128);
        byte[] raw = sum.toByteArray();
        byte[] block = new byte[16];
        int n = Math.min(raw.length, 16);
        System.arraycopy(raw, raw.length - n, block, 16 - n, n);
        return block;
    }

    public static String describeMismatch(byte[] expected, byte[] actual) {
        int i = Arrays.mismatch(expected, actual);
        if (i < 0) {
            return "equal";
        }
        return "lengths " + expected.length + "/" + actual.length + ", first difference at " + i;
    }

    /** Adds a failure message unless the arrays are equal. */
    public static void check(List<String> failures, String where, byte[] expected, byte[] actual) {
        if (!Arrays.equals(expected, actual)) {
            failures.add(where + ": " + describeMismatch(expected, actual));
        }
    }

    public static String report(List<String> failures) {
        int shown = Math.min(failures.size(), 40);
        return failures.size() + " failure(s):\n  " + String.join("\n  ", failures.subList(0, shown))
                + (shown < failures.size() ? "\n  ..." : "");
    }

    /**
     * A growable in-memory {@link SeekableByteChannel}; reads past the end return -1, writes past
     * the end zero-fill the gap. Synchronized, so it may be shared by threads.
     */
    public static final class MemoryChannel implements SeekableByteChannel {
        private byte[] data;
        private int size;
        private long position;
        private boolean open = true;
        private final boolean readOnly;
        public int closeCount;

        public MemoryChannel(byte[] content) {
            this(content, false);
        }

        public MemoryChannel(byte[] content, boolean readOnly) {
            this.data = content.clone();
            this.size = content.length;
            this.readOnly = readOnly;
        }

        @Override
        public synchronized int read(ByteBuffer dst) throws IOException {
            ensureOpen();
            if (position >= size) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), size - position);
            dst.put(data, (int) position, n);
            position += n;
            return n;
        }

        @Override
        public synchronized int write(ByteBuffer src) throws IOException {
            ensureOpen();
            if (readOnly) {
                throw new NonWritableChannelException();
            }
            int n = src.remaining();
            long end = position + n;
            if (end > data.length) {
                data = Arrays.copyOf(data, (int) Math.max(end, 2L * data.length));
            }
            src.get(data, (int) position, n);
            position = end;
            size = (int) Math.max(size, end);
            return n;
        }

        @Override
        public synchronized long position() throws IOException {
            ensureOpen();
            return position;
        }

        @Override
        public synchronized SeekableByteChannel position(long newPosition) throws IOException {
            ensureOpen();
            if (newPosition < 0) {
                throw new IllegalArgumentException("position < 0: " + newPosition);
            }
            position = newPosition;
            return this;
        }

        @Override
        public synchronized long size() throws IOException {
            ensureOpen();
            return size;
        }

        @Override
        public synchronized SeekableByteChannel truncate(long newSize) throws IOException {
            ensureOpen();
            size = (int) Math.min(size, newSize);
            position = Math.min(position, newSize);
            return this;
        }

        @Override
        public synchronized boolean isOpen() {
            return open;
        }

        @Override
        public synchronized void close() {
            open = false;
            closeCount++;
        }

        public synchronized byte[] toByteArray() {
            return Arrays.copyOf(data, size);
        }

        private void ensureOpen() throws ClosedChannelException {
            if (!open) {
                throw new ClosedChannelException();
            }
        }
    }

    /** Returns at most one byte per read call (Okio's OneByteAtATimeSource: likely to trigger bugs). */
    public static final class OneByteAtATime extends FilterInputStream {
        public OneByteAtATime(InputStream in) {
            super(in);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return super.read(b, off, Math.min(len, 1));
        }

        @Override
        public long skip(long n) throws IOException {
            return super.skip(Math.min(n, 1));
        }

        @Override
        public int available() {
            return 0;
        }
    }

    /**
     * An OutputStream that records what happens to it and fails on request: the write with index
     * {@code failWriteAt} (0-based, counting write calls) and every later one, flush, close.
     */
    public static final class FaultyOutputStream extends OutputStream {
        public final ByteArrayOutputStream written = new ByteArrayOutputStream();
        public int failWriteAt = Integer.MAX_VALUE;
        public boolean failFlush;
        public boolean failClose;
        int writeCalls;
        public int writesAfterFailure;
        public int flushCalls;
        public int closeCalls;
        private boolean failed;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (failed) {
                writesAfterFailure++;
            }
            if (closeCalls > 0) {
                throw new IOException("write on a closed FaultyOutputStream");
            }
            if (writeCalls++ >= failWriteAt) {
                failed = true;
                throw new IOException("injected write failure");
            }
            written.write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            flushCalls++;
            if (failFlush) {
                throw new IOException("injected flush failure");
            }
        }

        @Override
        public void close() throws IOException {
            closeCalls++;
            if (failClose) {
                throw new IOException("injected close failure");
            }
        }
    }
}
