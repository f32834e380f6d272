package io.sealpipe.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.CipherSuite;
import org.apache.hadoop.crypto.CryptoCodec;
import org.apache.hadoop.crypto.CryptoInputStream;
import org.apache.hadoop.crypto.CryptoOutputStream;
import org.apache.hadoop.crypto.Decryptor;
import org.apache.hadoop.crypto.Encryptor;
import org.apache.hadoop.crypto.JceAesCtrCryptoCodec;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link SealpipeAesCtrCryptoCodec} against Hadoop's own {@link JceAesCtrCryptoCodec}, on every
 * engine with CTR: the same bytes through Hadoop's CryptoOutputStream and CryptoInputStream
 * (both ways), seeks and positioned reads over a real local file, encryptors on heap and direct
 * buffers, the same IV arithmetic, and loaded by Hadoop's {@code CryptoCodec.getInstance} from
 * the configuration key.
 */
class SealpipeAesCtrCryptoCodecTest {
    private static final int[] SIZES = {0, 1, 15, 16, 17, 4095, 8192 + 3, 100_000};
    private static final List<byte[]> IVS = List.of(bytes(1, 16),
            HexFormat.of().parseHex("fffffffffffffffffffffffffffffff0"), // wraps around 2^128 within the stream
            HexFormat.of().parseHex("0000000000000000fffffffffffffffe")); // carries into the high half

    @TempDir
    Path dir;

    static Stream<Arguments> enginesAndKeys() {
        return TestEngines.ctrKinds().flatMap(kind -> Stream.of(16, 32).map(keyLength -> Arguments.of(kind, keyLength)));
    }

    private static SealpipeAesCtrCryptoCodec sealpipe(EngineKind kind) {
        SealpipeAesCtrCryptoCodec codec = new SealpipeAesCtrCryptoCodec(TestEngines.engine(kind));
        codec.setConf(new Configuration(false));
        return codec;
    }

    private static JceAesCtrCryptoCodec jce() {
        JceAesCtrCryptoCodec codec = new JceAesCtrCryptoCodec();
        codec.setConf(new Configuration(false));
        return codec;
    }

    private static byte[] bytes(long seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] write(CryptoCodec codec, byte[] key, byte[] iv, byte[] plain) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = new CryptoOutputStream(sink, codec, 4096, key, iv)) {
            int half = plain.length / 2;
            out.write(plain, 0, half);
            out.write(plain, half, plain.length - half);
        }
        return sink.toByteArray();
    }

    private static byte[] read(CryptoCodec codec, byte[] key, byte[] iv, byte[] sealed) throws IOException {
        try (InputStream in = new CryptoInputStream(new ByteArrayInputStream(sealed), codec, 4096, key, iv)) {
            return in.readAllBytes();
        }
    }

    @ParameterizedTest(name = "{0}, {1}-byte key")
    @MethodSource("enginesAndKeys")
    void theSameBytesAsHadoopsJceCodecThroughHadoopsStreams(EngineKind kind, int keyLength) throws IOException {
        byte[] key = bytes(keyLength, keyLength);
        SealpipeAesCtrCryptoCodec ours = sealpipe(kind);
        JceAesCtrCryptoCodec theirs = jce();
        for (byte[] iv : IVS) {
            for (int size : SIZES) {
                byte[] plain = bytes(size, size);
                String where = size + " bytes, iv " + HexFormat.of().formatHex(iv);
                byte[] byOurs = write(ours, key, iv, plain);
                assertArrayEquals(write(theirs, key, iv, plain), byOurs, where);
                assertArrayEquals(plain, read(theirs, key, iv, byOurs), where + ": JCE reads ours");
                assertArrayEquals(plain, read(ours, key, iv, byOurs), where + ": ours reads ours");
            }
        }
    }

    /**
     * A file written with Hadoop's JCE codec on the local file system, read through Hadoop's
     * CryptoInputStream with sealpipe's codec over the file system's own stream: random seeks then
     * reads, and positioned reads, each the plaintext at its offset.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void seeksAndPositionedReadsOverALocalFile(EngineKind kind) throws IOException {
        byte[] key = bytes(5, 32);
        byte[] iv = IVS.get(2);
        byte[] plain = bytes(6, 300_000 + 5);
        java.nio.file.Files.write(dir.resolve("f"), write(jce(), key, iv, plain));
        Configuration conf = new Configuration(false);
        try (FileSystem fs = new RawLocalFileSystem()) {
            fs.initialize(java.net.URI.create("file:///"), conf);
            org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(dir.resolve("f").toUri());
            try (FSDataInputStream raw = fs.open(file);
                    CryptoInputStream in = new CryptoInputStream(raw, sealpipe(kind), 4096, key, iv)) {
                Random r = new Random(7);
                byte[] got = new byte[10_000];
                for (int i = 0; i < 300; i++) {
                    int pos = r.nextInt(plain.length);
                    int len = 1 + r.nextInt(Math.min(got.length, plain.length - pos));
                    if (i % 2 == 0) {
                        in.seek(pos);
                        assertEquals(len, in.readNBytes(got, 0, len));
                    } else {
                        in.readFully(pos, got, 0, len);
                    }
                    assertArrayEquals(Arrays.copyOfRange(plain, pos, pos + len), Arrays.copyOf(got, len),
                            (i % 2 == 0 ? "seek to " : "positioned read at ") + pos + ", " + len + " bytes");
                }
            }
        }
    }

    /**
     * The encryptor and decryptor alone, as HDFS's streams use them: pieces of heap and direct
     * buffers; init again with the same key (the context is kept) and with another key.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void encryptorsAndDecryptorsOnHeapAndDirectBuffers(EngineKind kind) throws Exception {
        byte[] plain = bytes(8, 70_000);
        Encryptor ours = sealpipe(kind).createEncryptor();
        Encryptor theirs = jce().createEncryptor();
        Decryptor back = sealpipe(kind).createDecryptor();
        for (int round = 0; round < 4; round++) {
            byte[] key = bytes(round / 2, 32); // the same key twice, then another
            byte[] iv = bytes(20 + round, 16);
            ours.init(key, iv);
            theirs.init(key, iv);
            back.init(key, iv);
            boolean direct = round % 2 == 0;
            byte[] sealed = pieces(ours, plain, direct);
            assertArrayEquals(pieces(theirs, plain, direct), sealed, "round " + round);
            assertArrayEquals(plain, pieces(back, sealed, !direct), "round " + round + ", decrypted");
            assertFalse(ours.isContextReset());
        }
    }

    private interface Transform {
        void apply(ByteBuffer in, ByteBuffer out) throws IOException;
    }

    private static byte[] pieces(Encryptor e, byte[] in, boolean direct) throws IOException {
        return pieces(e::encrypt, in, direct);
    }

    private static byte[] pieces(Decryptor d, byte[] in, boolean direct) throws IOException {
        return pieces(d::decrypt, in, direct);
    }

    private static byte[] pieces(Transform t, byte[] in, boolean direct) throws IOException {
        ByteBuffer src = direct ? ByteBuffer.allocateDirect(in.length) : ByteBuffer.allocate(in.length);
        src.put(in).flip();
        ByteBuffer dst = direct ? ByteBuffer.allocateDirect(in.length) : ByteBuffer.allocate(in.length);
        for (int step = 1; src.hasRemaining(); step = step * 5 + 3) {
            ByteBuffer piece = src.duplicate();
            piece.limit(Math.min(src.limit(), src.position() + step));
            t.apply(piece, dst);
            assertFalse(piece.hasRemaining(), "the whole input is consumed");
            src.position(piece.position());
        }
        byte[] out = new byte[in.length];
        dst.flip().get(out);
        return out;
    }

    @Test
    void calculateIvIsHadoops() {
        SealpipeAesCtrCryptoCodec ours = new SealpipeAesCtrCryptoCodec();
        JceAesCtrCryptoCodec theirs = jce();
        Random r = new Random(9);
        long[] counters = {0, 1, 255, 256, Long.MAX_VALUE, -1, Long.MIN_VALUE, 0x00ff00ff00ff00ffL};
        for (int i = 0; i < 2000; i++) {
            byte[] init = i < IVS.size() ? IVS.get(i) : bytes(r.nextLong(), 16);
            if (i % 7 == 0) {
                Arrays.fill(init, 8, 16, (byte) 0xff); // long carries
            }
            long counter = i < counters.length ? counters[i] : r.nextLong();
            byte[] expected = new byte[16];
            byte[] actual = new byte[16];
            theirs.calculateIV(init, counter, expected);
            ours.calculateIV(init, counter, actual);
            assertArrayEquals(expected, actual, HexFormat.of().formatHex(init) + " + " + Long.toUnsignedString(counter));
        }
        assertThrows(IllegalArgumentException.class, () -> ours.calculateIV(new byte[12], 1, new byte[16]));
    }

    /** Hadoop's lookup: the first class of the configuration key whose suite matches. */
    @Test
    void hadoopsGetInstanceLoadsItFromTheConfiguration() throws IOException {
        Configuration conf = new Configuration(false);
        conf.set("hadoop.security.crypto.codec.classes.aes.ctr.nopadding",
                SealpipeAesCtrCryptoCodec.class.getName() + "," + JceAesCtrCryptoCodec.class.getName());
        try (CryptoCodec codec = CryptoCodec.getInstance(conf)) {
            assertInstanceOf(SealpipeAesCtrCryptoCodec.class, codec);
            assertEquals(CipherSuite.AES_CTR_NOPADDING, codec.getCipherSuite());
            assertTrue(codec.getConf() == conf, "Hadoop gave it the configuration");
        }
    }

    /** Bad keys, IVs, calls before init and short outputs fail with an IOException, as with Hadoop's JCE codec. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void badCallsFailAsWithTheJceCodec(EngineKind kind) throws Exception {
        for (CryptoCodec codec : List.of(sealpipe(kind), jce())) {
            String name = codec.getClass().getSimpleName();
            assertThrows(IOException.class, () -> codec.createEncryptor().init(new byte[15], new byte[16]), name + ": key");
            assertThrows(IOException.class, () -> codec.createEncryptor().init(new byte[16], new byte[12]), name + ": iv");
            assertThrows(IOException.class, () -> codec.createEncryptor().encrypt(ByteBuffer.allocate(4),
                    ByteBuffer.allocate(4)), name + ": before init");
            Encryptor e = codec.createEncryptor();
            e.init(new byte[16], new byte[16]);
            assertThrows(IOException.class, () -> e.encrypt(ByteBuffer.allocateDirect(8), ByteBuffer.allocateDirect(4)),
                    name + ": short output");
        }
    }

    @Test
    void secureRandomBytesComeFromTheConfiguredAlgorithm() {
        SealpipeAesCtrCryptoCodec codec = new SealpipeAesCtrCryptoCodec();
        byte[] a = new byte[32];
        byte[] b = new byte[32];
        codec.generateSecureRandom(a); // before setConf: the platform's default
        codec.generateSecureRandom(b);
        assertFalse(Arrays.equals(a, b));
        Configuration conf = new Configuration(false);
        conf.set(SealpipeAesCtrCryptoCodec.SECURE_RANDOM_ALGORITHM, "SHA1PRNG");
        codec.setConf(conf);
        codec.generateSecureRandom(a);
        conf.set(SealpipeAesCtrCryptoCodec.SECURE_RANDOM_ALGORITHM, "NoSuchRandom");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> codec.setConf(conf));
        assertTrue(e.getMessage().contains(SealpipeAesCtrCryptoCodec.SECURE_RANDOM_ALGORITHM), e.getMessage());
    }
}
