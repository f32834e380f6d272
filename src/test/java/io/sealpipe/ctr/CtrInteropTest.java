package io.sealpipe.ctr;

import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.CtrFixtures.check;
import static io.sealpipe.CtrFixtures.ivs;
import static io.sealpipe.CtrFixtures.key;
import static io.sealpipe.CtrFixtures.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.CtrFixtures;
import io.sealpipe.CtrFixtures.MemoryChannel;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.commons.crypto.cipher.CryptoCipherFactory;
import org.apache.commons.crypto.stream.CtrCryptoInputStream;
import org.apache.commons.crypto.stream.CtrCryptoOutputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.CryptoCodec;
import org.apache.hadoop.crypto.JceAesCtrCryptoCodec;
import org.apache.hadoop.fs.PositionedReadable;
import org.apache.hadoop.fs.Seekable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Byte compatibility with two independent implementations of the Hadoop CTR stream format:
 * Commons Crypto 1.2.0 ({@code CtrCryptoOutputStream}/{@code CtrCryptoInputStream}) and Hadoop
 * 3.4.1 ({@code org.apache.hadoop.crypto.CryptoOutputStream}/{@code CryptoInputStream} with
 * {@code JceAesCtrCryptoCodec}). Both directions, every engine, sizes 0 .. several buffers,
 * IVs whose counter carries, and unaligned stream offsets. Our streams are driven with seeded
 * random write and read splits, so buffering edges fall at odd places.
 *
 * <p>Both oracles run on their JCE path: Commons Crypto 1.2.0's OpenSSL binding does not load on
 * OpenSSL 3, and Hadoop's OpenSSL codec needs libhadoop. Their JCE path shares no code with our
 * engines (even our JCE engine: they compute counter blocks and offsets themselves).
 */
class CtrInteropTest {
    /** Not a multiple of 16, so our buffer boundaries fall inside AES blocks. */
    private static final int ODD_BUFFER = 1000;
    private static final long[] OFFSETS = {0, 12345, (1L << 62) + 7};

    static Stream<Arguments> enginesAndIvs() {
        return TestEngines.ctrKinds().flatMap(kind -> ivs().keySet().stream().map(iv -> Arguments.of(kind, iv)));
    }

    static Stream<EngineKind> kinds() {
        return TestEngines.ctrKinds();
    }

    static int[] sizes(int buffer) {
        return new int[] {0, 1, 15, 16, 17, 4095, buffer - 1, buffer, buffer + 1, 3 * buffer + 7, (1 << 20) + 3};
    }

    /** Commons Crypto on its JCE cipher (its OpenSSL path does not load on OpenSSL 3). */
    static Properties commonsProperties(int bufferSize) {
        Properties p = new Properties();
        p.setProperty(CryptoCipherFactory.CLASSES_KEY, CryptoCipherFactory.CipherProvider.JCE.getClassName());
        p.setProperty(org.apache.commons.crypto.stream.CryptoInputStream.STREAM_BUFFER_SIZE_KEY, Integer.toString(bufferSize));
        return p;
    }

    static CryptoCodec hadoopCodec() {
        JceAesCtrCryptoCodec codec = new JceAesCtrCryptoCodec();
        codec.setConf(new Configuration(false)); // no *-default.xml: nothing on the classpath decides
        return codec;
    }

    // ---------------------------------------------------------------- Commons Crypto

    @ParameterizedTest(name = "{0}, iv {1}")
    @MethodSource("enginesAndIvs")
    void commonsCryptoAgreesInBothDirections(EngineKind kind, String ivName) throws Exception {
        byte[] iv = ivs().get(ivName);
        Random random = new Random(7001 + ivName.hashCode());
        List<String> failures = new ArrayList<>();
        int caseNo = 0;
        for (int buffer : new int[] {ODD_BUFFER, CtrStreams.DEFAULT_BUFFER_SIZE}) {
            for (int size : sizes(buffer)) {
                for (long offset : OFFSETS) {
                    byte[] key = key(new int[] {16, 24, 32}[caseNo++ % 3]);
                    byte[] plain = bytes(random, size);
                    String where = kind + " buffer " + buffer + " size " + size + " offset " + offset + " key "
                            + key.length;
                    CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(buffer).streamOffset(offset).build();
                    // Commons Crypto's buffer differs from ours, so the two never buffer alike.
                    Properties props = commonsProperties(4096);

                    ByteArrayOutputStream theirs = new ByteArrayOutputStream();
                    try (OutputStream out = new CtrCryptoOutputStream(props, theirs, key, iv, offset)) {
                        out.write(plain);
                    }
                    byte[] ours = encryptInRandomSplits(ctr, plain, random);

                    check(failures, where + ": our ciphertext vs Commons Crypto's", theirs.toByteArray(), ours);
                    check(failures, where + ": we decrypt Commons Crypto's",
                            plain, decryptInRandomSplits(ctr, theirs.toByteArray(), random));
                    try (InputStream in = new CtrCryptoInputStream(props, new ByteArrayInputStream(ours), key, iv, offset)) {
                        check(failures, where + ": Commons Crypto decrypts ours", plain, in.readAllBytes());
                    }
                }
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    /** The oracle itself agrees with our BigInteger reference, so the interop tests check something real. */
    @Test
    void commonsCryptoAgreesWithTheReference() throws Exception {
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, byte[]> iv : ivs().entrySet()) {
            for (long offset : OFFSETS) {
                byte[] key = key(16);
                byte[] plain = bytes(offset + iv.getKey().hashCode(), 3000);
                ByteArrayOutputStream theirs = new ByteArrayOutputStream();
                try (OutputStream out = new CtrCryptoOutputStream(commonsProperties(512), theirs, key, iv.getValue(), offset)) {
                    out.write(plain);
                }
                check(failures, "iv " + iv.getKey() + " offset " + offset,
                        CtrFixtures.referenceCtr(key, iv.getValue(), offset, plain), theirs.toByteArray());
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    // ---------------------------------------------------------------- Hadoop

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void hadoopAgreesInBothDirections(EngineKind kind) throws Exception {
        Random random = new Random(8002);
        CryptoCodec codec = hadoopCodec();
        List<String> failures = new ArrayList<>();
        int caseNo = 0;
        for (Map.Entry<String, byte[]> ivEntry : ivs().entrySet()) {
            byte[] iv = ivEntry.getValue();
            for (int size : sizes(ODD_BUFFER)) {
                for (long offset : OFFSETS) {
                    byte[] key = key(new int[] {16, 24, 32}[caseNo++ % 3]);
                    byte[] plain = bytes(random, size);
                    String where = kind + " iv " + ivEntry.getKey() + " size " + size + " offset " + offset;
                    CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(ODD_BUFFER).streamOffset(offset).build();

                    byte[] theirs = hadoopEncrypt(codec, key, iv, offset, plain);
                    byte[] ours = encryptInRandomSplits(ctr, plain, random);
                    check(failures, where + ": our ciphertext vs Hadoop's", theirs, ours);
                    check(failures, where + ": we decrypt Hadoop's", plain, decryptInRandomSplits(ctr, theirs, random));
                    try (InputStream in = new org.apache.hadoop.crypto.CryptoInputStream(
                            new ByteArrayInputStream(ours), codec, 4096, key, iv, offset)) {
                        check(failures, where + ": Hadoop decrypts ours", plain, in.readAllBytes());
                    }
                }
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    /**
     * Hadoop writes the first 12345 bytes, we append the rest with streamOffset 12345 (as after
     * reopening a file for append), and the reverse; either side reads the whole.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void appendingAtAnUnalignedOffsetContinuesHadoopsStream(EngineKind kind) throws Exception {
        CryptoCodec codec = hadoopCodec();
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, byte[]> ivEntry : ivs().entrySet()) {
            byte[] key = key(32);
            byte[] iv = ivEntry.getValue();
            byte[] plain = bytes(12, 12345 + 54321);
            byte[] head = Arrays.copyOfRange(plain, 0, 12345);
            byte[] tail = Arrays.copyOfRange(plain, 12345, plain.length);
            CtrStreams ours = CtrFixtures.builder(kind, key, iv).bufferSize(ODD_BUFFER).build();
            CtrStreams oursAppend = CtrFixtures.builder(kind, key, iv).bufferSize(ODD_BUFFER).streamOffset(12345).build();

            // Hadoop's head + our tail, read by Hadoop from 0.
            ByteArrayOutputStream file = new ByteArrayOutputStream();
            file.write(hadoopEncrypt(codec, key, iv, 0, head));
            try (CryptoOutputStream out = oursAppend.encrypt(file)) {
                assertEquals(12345, out.getPos());
                out.write(tail);
                assertEquals(plain.length, out.getPos());
            }
            try (InputStream in = new org.apache.hadoop.crypto.CryptoInputStream(
                    new ByteArrayInputStream(file.toByteArray()), codec, 4096, key, iv, 0)) {
                check(failures, kind + " iv " + ivEntry.getKey() + ": Hadoop reads Hadoop head + our tail",
                        plain, in.readAllBytes());
            }

            // Our head + Hadoop's tail, read by us from 0, and our reader started at the tail.
            ByteArrayOutputStream file2 = new ByteArrayOutputStream();
            try (CryptoOutputStream out = ours.encrypt(file2)) {
                out.write(head);
            }
            file2.write(hadoopEncrypt(codec, key, iv, 12345, tail));
            try (CryptoInputStream in = ours.decrypt(new ByteArrayInputStream(file2.toByteArray()))) {
                check(failures, kind + " iv " + ivEntry.getKey() + ": we read our head + Hadoop tail",
                        plain, in.readAllBytes());
            }
            MemoryChannel channel = new MemoryChannel(file2.toByteArray());
            channel.position(12345);
            try (CryptoInputStream in = oursAppend.decrypt(channel)) {
                check(failures, kind + " iv " + ivEntry.getKey() + ": we read the tail alone, from a channel at 12345",
                        tail, in.readAllBytes());
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    /**
     * Hadoop's own seekable reader (over an adapter implementing Seekable and
     * PositionedReadable) and ours agree on random seeks and positioned reads of a file whose
     * ciphertext starts at file position = stream position 12345 (Hadoop equates the two: its
     * seek(p) moves the wrapped stream to p). Both readers are opened at 12345.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void hadoopSeeksAndPositionedReadsAgreeWithOurs(EngineKind kind) throws Exception {
        CryptoCodec codec = hadoopCodec();
        byte[] key = key(16);
        byte[] iv = ivs().get("low64-ff");
        int offset = 12345;
        byte[] plain = bytes(99, 40_000);
        CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(ODD_BUFFER).streamOffset(offset).build();
        byte[] file = new byte[offset + plain.length];
        Arrays.fill(file, 0, offset, (byte) 0x55); // an earlier part of the file, never read
        System.arraycopy(encryptInRandomSplits(ctr, plain, new Random(1)), 0, file, offset, plain.length);
        long end = (long) offset + plain.length;
        Random random = new Random(2);
        List<String> failures = new ArrayList<>();
        SeekableByteArrayInputStream hadoopFile = new SeekableByteArrayInputStream(file);
        hadoopFile.seek(offset);
        MemoryChannel ourFile = new MemoryChannel(file);
        ourFile.position(offset);
        try (org.apache.hadoop.crypto.CryptoInputStream hadoop =
                        new org.apache.hadoop.crypto.CryptoInputStream(hadoopFile, codec, 4096, key, iv, offset);
                io.sealpipe.ctr.CryptoInputStream ours = ctr.decrypt(ourFile)) {
            check(failures, "first 100 bytes", readUpTo(hadoop, 100), readUpTo(ours, 100));
            for (int i = 0; i < 300; i++) {
                long pos = offset + random.nextInt(plain.length + 1);
                int len = random.nextInt(random.nextBoolean() ? 40 : 5000);
                String where = "op " + i + " at " + pos + " length " + len;
                if (random.nextBoolean()) {
                    hadoop.seek(pos);
                    ours.seek(pos);
                    byte[] a = readUpTo(hadoop, len);
                    byte[] b = readUpTo(ours, len);
                    check(failures, where + " (seek + read)", a, b);
                    int from = (int) (pos - offset);
                    int expectedLength = (int) Math.min(len, end - pos);
                    check(failures, where + " (seek + read vs plaintext)",
                            Arrays.copyOfRange(plain, from, from + expectedLength), b);
                } else {
                    byte[] a = new byte[len];
                    byte[] b = new byte[len];
                    boolean aEof = readFullyOrEof(() -> hadoop.readFully(pos, a, 0, len));
                    boolean bEof = readFullyOrEof(() -> ours.readFully(pos, b, 0, len));
                    if (aEof != bEof) {
                        failures.add(where + ": readFully EOF Hadoop " + aEof + ", ours " + bEof);
                    } else if (!aEof) {
                        check(failures, where + " (readFully)", a, b);
                    }
                }
            }
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    // ---------------------------------------------------------------- helpers

    static byte[] hadoopEncrypt(CryptoCodec codec, byte[] key, byte[] iv, long offset, byte[] plain) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (OutputStream out = new org.apache.hadoop.crypto.CryptoOutputStream(bytes, codec, 4096, key, iv, offset)) {
            out.write(plain);
        }
        return bytes.toByteArray();
    }

    /** Writes in random pieces: single bytes, small (buffered) and large (direct) writes. */
    static byte[] encryptInRandomSplits(CtrStreams ctr, byte[] plain, Random random) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (CryptoOutputStream out = ctr.encrypt(bytes)) {
            int done = 0;
            while (done < plain.length) {
                int n = Math.min(plain.length - done, pieceLength(random));
                if (n == 1 && random.nextBoolean()) {
                    out.write(plain[done]);
                } else {
                    out.write(plain, done, n);
                }
                done += n;
            }
        }
        return bytes.toByteArray();
    }

    static byte[] decryptInRandomSplits(CtrStreams ctr, byte[] cipher, Random random) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (io.sealpipe.ctr.CryptoInputStream in = ctr.decrypt(new ByteArrayInputStream(cipher))) {
            byte[] piece = new byte[70_000];
            while (true) {
                int len = pieceLength(random);
                if (len == 1 && random.nextBoolean()) {
                    int b = in.read();
                    if (b < 0) {
                        break;
                    }
                    bytes.write(b);
                    continue;
                }
                int n = in.read(piece, 3, Math.min(len, piece.length - 3));
                if (n < 0) {
                    break;
                }
                bytes.write(piece, 3, n);
            }
        }
        return bytes.toByteArray();
    }

    private static int pieceLength(Random random) {
        return switch (random.nextInt(4)) {
            case 0 -> 1;
            case 1 -> 1 + random.nextInt(255);
            case 2 -> 256 + random.nextInt(3000);
            default -> 1 + random.nextInt(66_000);
        };
    }

    static byte[] readUpTo(InputStream in, int len) throws IOException {
        return in.readNBytes(len);
    }

    interface IoAction {
        void run() throws IOException;
    }

    static boolean readFullyOrEof(IoAction action) throws IOException {
        try {
            action.run();
            return false;
        } catch (EOFException e) {
            return true;
        }
    }

    /** What Hadoop's CryptoInputStream needs to seek: a byte array as Seekable and PositionedReadable. */
    static final class SeekableByteArrayInputStream extends ByteArrayInputStream
            implements Seekable, PositionedReadable {
        SeekableByteArrayInputStream(byte[] data) {
            super(data);
        }

        @Override
        public synchronized void seek(long position) throws IOException {
            if (position < 0 || position > count) {
                throw new EOFException("cannot seek to " + position + " of " + count);
            }
            pos = (int) position;
        }

        @Override
        public synchronized long getPos() {
            return pos;
        }

        @Override
        public boolean seekToNewSource(long targetPos) {
            return false;
        }

        @Override
        public synchronized int read(long position, byte[] b, int off, int len) {
            if (position >= count) {
                return -1;
            }
            int n = (int) Math.min(len, count - position);
            System.arraycopy(buf, (int) position, b, off, n);
            return n;
        }

        @Override
        public void readFully(long position, byte[] b, int off, int len) throws IOException {
            if (position + len > count) {
                throw new EOFException("only " + (count - position) + " bytes at " + position);
            }
            read(position, b, off, len);
        }

        @Override
        public void readFully(long position, byte[] b) throws IOException {
            readFully(position, b, 0, b.length);
        }
    }
}
