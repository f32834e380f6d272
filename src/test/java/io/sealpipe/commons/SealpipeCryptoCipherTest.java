package io.sealpipe.commons;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.spec.AlgorithmParameterSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.stream.Stream;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.commons.crypto.cipher.CryptoCipher;
import org.apache.commons.crypto.cipher.CryptoCipherFactory;
import org.apache.commons.crypto.stream.CryptoInputStream;
import org.apache.commons.crypto.stream.CryptoOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link SealpipeCryptoCipher} against Commons Crypto's own JCE cipher, on every engine with CTR:
 * the same bytes for every call pattern (arrays, heap and direct buffers, splits, doFinal and
 * init again, counters that wrap), the same exception classes for bad arguments, and loaded by
 * name by Commons Crypto's factory and streams, as Spark loads it.
 */
class SealpipeCryptoCipherTest {
    private static final String CTR = SealpipeCryptoCipher.TRANSFORMATION;
    private static final int[] SIZES = {0, 1, 15, 16, 17, 4095, 8192, 65536 + 3};
    private static final byte[] WRAPPING_IV = HexFormat.of().parseHex("00000000000000fffffffffffffffffe");

    static Stream<Arguments> enginesAndKeys() {
        return TestEngines.ctrKinds().flatMap(kind -> Stream.of(16, 24, 32).map(keyLength -> Arguments.of(kind, keyLength)));
    }

    private static SealpipeCryptoCipher sealpipe(EngineKind kind) throws GeneralSecurityException {
        return new SealpipeCryptoCipher(CTR, TestEngines.engine(kind));
    }

    private static CryptoCipher jce() throws GeneralSecurityException {
        Properties p = new Properties();
        p.setProperty(CryptoCipherFactory.CLASSES_KEY, CryptoCipherFactory.CipherProvider.JCE.getClassName());
        return CryptoCipherFactory.getCryptoCipher(CTR, p);
    }

    private static byte[] bytes(long seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** One way of feeding a cipher: the output of every step, concatenated. */
    private interface Pattern {
        byte[] run(CryptoCipher c, byte[] plain) throws Exception;
    }

    private static final Pattern ARRAYS_ONE_CALL = (c, in) -> {
        byte[] out = new byte[in.length];
        assertEquals(in.length, c.update(in, 0, in.length, out, 0));
        return out;
    };

    /** Uneven updates into an offset of a larger array, then a doFinal of the rest. */
    private static final Pattern ARRAYS_SPLIT = (c, in) -> {
        byte[] out = new byte[in.length + 7];
        int pos = 0;
        for (int step = 1; pos + step < in.length; step = step * 3 + 1) {
            pos += c.update(in, pos, step, out, pos + 7);
        }
        c.doFinal(in, pos, in.length - pos, out, pos + 7);
        return Arrays.copyOfRange(out, 7, out.length);
    };

    private static Pattern buffers(boolean directIn, boolean directOut) {
        return (c, in) -> {
            ByteBuffer src = directIn ? ByteBuffer.allocateDirect(in.length + 3) : ByteBuffer.allocate(in.length + 3);
            src.position(3);
            src.put(in).flip().position(3);
            ByteBuffer dst = directOut ? ByteBuffer.allocateDirect(in.length + 5) : ByteBuffer.allocate(in.length + 5);
            dst.position(5);
            int half = in.length / 2;
            ByteBuffer first = src.duplicate().limit(3 + half);
            assertEquals(half, c.update(first, dst));
            assertEquals(3 + half, first.position(), "the input's position advanced");
            src.position(3 + half);
            assertEquals(in.length - half, c.doFinal(src, dst));
            assertEquals(in.length + 5, dst.position(), "the output's position advanced");
            byte[] out = new byte[in.length];
            dst.flip().position(5);
            dst.get(out);
            return out;
        };
    }

    /** In place in one array, then doFinal and the same again: doFinal starts over at the IV. */
    private static final Pattern IN_PLACE_TWICE = (c, in) -> {
        byte[] buf = in.clone();
        c.doFinal(buf, 0, buf.length, buf, 0);
        byte[] again = in.clone();
        c.update(again, 0, again.length, again, 0);
        ByteArrayOutputStream both = new ByteArrayOutputStream();
        both.write(buf);
        both.write(again);
        return both.toByteArray();
    };

    /** Output one byte after the input in the same array (a partial overlap). */
    private static final Pattern OVERLAPPING = (c, in) -> {
        byte[] buf = Arrays.copyOf(in, in.length + 1);
        c.update(buf, 0, in.length, buf, 1);
        return Arrays.copyOfRange(buf, 1, buf.length);
    };

    private static final List<Pattern> PATTERNS = List.of(ARRAYS_ONE_CALL, ARRAYS_SPLIT, buffers(false, false),
            buffers(true, true), buffers(false, true), buffers(true, false), IN_PLACE_TWICE, OVERLAPPING);

    @ParameterizedTest(name = "{0}, {1}-byte key")
    @MethodSource("enginesAndKeys")
    void theSameBytesAsCommonsCryptosJceCipher(EngineKind kind, int keyLength) throws Exception {
        SecretKeySpec key = new SecretKeySpec(bytes(keyLength, keyLength), "AES");
        try (SealpipeCryptoCipher ours = sealpipe(kind); CryptoCipher theirs = jce()) {
            for (byte[] iv : List.of(bytes(1, 16), WRAPPING_IV)) {
                for (int size : SIZES) {
                    byte[] plain = bytes(size, size);
                    for (int p = 0; p < PATTERNS.size(); p++) {
                        for (int mode : new int[] {Cipher.ENCRYPT_MODE, Cipher.DECRYPT_MODE}) {
                            ours.init(mode, key, new IvParameterSpec(iv));
                            theirs.init(mode, key, new IvParameterSpec(iv));
                            String where = "pattern " + p + ", " + size + " bytes, iv " + HexFormat.of().formatHex(iv)
                                    + ", mode " + mode;
                            assertArrayEquals(PATTERNS.get(p).run(theirs, plain), PATTERNS.get(p).run(ours, plain), where);
                        }
                    }
                }
            }
        }
    }

    /** init with the same key keeps the context; a new key makes a new one: both give JCE's bytes. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void initAgainWithTheSameOrAnotherKey(EngineKind kind) throws Exception {
        byte[] plain = bytes(3, 5000);
        try (SealpipeCryptoCipher ours = sealpipe(kind); CryptoCipher theirs = jce()) {
            for (int round = 0; round < 4; round++) {
                SecretKeySpec key = new SecretKeySpec(bytes(round / 2, 32), "AES"); // the same key twice, then another
                IvParameterSpec iv = new IvParameterSpec(bytes(100 + round, 16));
                ours.init(Cipher.ENCRYPT_MODE, key, iv);
                theirs.init(Cipher.ENCRYPT_MODE, key, iv);
                assertArrayEquals(ARRAYS_SPLIT.run(theirs, plain), ARRAYS_SPLIT.run(ours, plain), "round " + round);
            }
        }
    }

    /** A bad call of each kind: the exception class of Commons Crypto's JCE cipher. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void badArgumentsThrowWhatTheJceCipherThrows(EngineKind kind) throws Exception {
        SecretKeySpec key = new SecretKeySpec(bytes(1, 32), "AES");
        IvParameterSpec iv = new IvParameterSpec(bytes(2, 16));
        List<String> checked = new ArrayList<>();
        Call[] beforeInit = {
            c -> c.update(new byte[4], 0, 4, new byte[4], 0),
            c -> c.update(ByteBuffer.allocate(4), ByteBuffer.allocate(4)),
            c -> c.doFinal(new byte[4], 0, 4, new byte[4], 0),
        };
        Init[] badInits = {
            c -> c.init(Cipher.ENCRYPT_MODE, null, iv),
            c -> c.init(Cipher.ENCRYPT_MODE, key, null),
            c -> c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(bytes(1, 15), "AES"), iv),
            c -> c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(bytes(1, 33), "AES"), iv),
            c -> c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(bytes(1, 32), "DES"), iv),
            c -> c.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(new byte[12])),
            c -> c.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, new byte[16])),
            c -> c.init(0, key, iv),
            c -> c.init(5, key, iv),
        };
        Call[] afterInit = {
            c -> c.update(new byte[4], 0, 4, new byte[3], 0),
            c -> c.update(new byte[4], 0, 4, new byte[4], 1),
            c -> c.update(new byte[4], -1, 4, new byte[4], 0),
            c -> c.update(new byte[4], 1, 4, new byte[4], 0),
            c -> c.update(new byte[4], 0, -1, new byte[4], 0),
            c -> c.update(new byte[4], 0, 4, new byte[4], -1),
            c -> c.update(null, 0, 4, new byte[4], 0),
            c -> c.doFinal(new byte[4], 0, 4, new byte[3], 0),
            c -> c.update(ByteBuffer.allocate(4), ByteBuffer.allocate(3)),
            c -> c.update(ByteBuffer.allocateDirect(4), ByteBuffer.allocateDirect(3)),
            c -> c.update(ByteBuffer.allocate(4), ByteBuffer.allocate(4).asReadOnlyBuffer()),
            c -> c.update(null, ByteBuffer.allocate(4)),
            c -> c.update(ByteBuffer.allocate(4), null),
            c -> {
                ByteBuffer same = ByteBuffer.allocate(4);
                return c.update(same, same);
            },
            c -> c.doFinal(ByteBuffer.allocate(4), ByteBuffer.allocate(3)),
        };
        for (int i = 0; i < beforeInit.length; i++) {
            sameFailure("before init, call " + i, kind, null, beforeInit[i], checked);
        }
        for (int i = 0; i < badInits.length; i++) {
            Init bad = badInits[i];
            sameFailure("init " + i, kind, null, c -> {
                bad.init(c);
                return 0;
            }, checked);
        }
        for (int i = 0; i < afterInit.length; i++) {
            sameFailure("after init, call " + i, kind, c -> c.init(Cipher.ENCRYPT_MODE, key, iv), afterInit[i], checked);
        }
        assertEquals(beforeInit.length + badInits.length + afterInit.length, checked.size());
    }

    private interface Call {
        int call(CryptoCipher c) throws Exception;
    }

    private interface Init {
        void init(CryptoCipher c) throws Exception;
    }

    private static void sameFailure(String what, EngineKind kind, Init setUp, Call call, List<String> checked) throws Exception {
        Class<?> expected = failureOf(jce(), setUp, call);
        Class<?> actual = failureOf(sealpipe(kind), setUp, call);
        if (expected == null) {
            fail(what + ": the JCE cipher did not fail, so there is nothing to compare");
        }
        assertEquals(expected, actual, what);
        checked.add(what);
    }

    private static Class<?> failureOf(CryptoCipher c, Init setUp, Call call) throws Exception {
        try (c) {
            if (setUp != null) {
                setUp.init(c);
            }
            call.call(c);
            return null;
        } catch (Exception | AssertionError e) {
            if (e instanceof AssertionError) {
                throw (AssertionError) e;
            }
            return e.getClass();
        }
    }

    /** After close() every call fails, and close() again is harmless. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void closedCiphersRefuseEveryCall(EngineKind kind) throws Exception {
        SealpipeCryptoCipher c = sealpipe(kind);
        Key key = new SecretKeySpec(bytes(1, 16), "AES");
        AlgorithmParameterSpec iv = new IvParameterSpec(new byte[16]);
        c.init(Cipher.ENCRYPT_MODE, key, iv);
        c.close();
        c.close();
        assertThrows(IllegalStateException.class, () -> c.update(new byte[1], 0, 1, new byte[1], 0));
        assertThrows(IllegalStateException.class, () -> c.init(Cipher.ENCRYPT_MODE, key, iv));
    }

    /** The commons-crypto these tests run on: the project's, or Spark's in a second run (pom.xml). */
    @Test
    void runsOnTheCommonsCryptoTheBuildNames() {
        String expected = System.getProperty("sealpipe.test.commons-crypto.version");
        assumeTrue(expected != null, "run outside Maven: no version named");
        assertEquals(expected, CryptoCipherFactory.class.getPackage().getImplementationVersion());
    }

    @Test
    void otherTransformationsAreRefusedNamingTheOneSupported() {
        for (String t : new String[] {"AES/GCM/NoPadding", "AES/CBC/PKCS5Padding", "AES/CTR/PKCS5Padding", null}) {
            GeneralSecurityException e = assertThrows(GeneralSecurityException.class, () -> new SealpipeCryptoCipher(new Properties(), t));
            assertTrue(e.getMessage().contains(CTR), e.getMessage());
        }
    }

    /** Commons Crypto's factory loads it by name, with sealpipe's class the only one listed (as Spark's setting does). */
    @Test
    void commonsCryptosFactoryLoadsItByName() throws Exception {
        Properties p = new Properties();
        p.setProperty(CryptoCipherFactory.CLASSES_KEY, SealpipeCryptoCipher.class.getName());
        try (CryptoCipher c = CryptoCipherFactory.getCryptoCipher("AES/CTR/NoPadding", p)) {
            assertInstanceOf(SealpipeCryptoCipher.class, c);
            assertEquals(16, c.getBlockSize());
            assertEquals("AES/CTR/NoPadding", c.getAlgorithm());
        }
    }

    /**
     * Commons Crypto's CryptoOutputStream and CryptoInputStream (Spark's path for shuffle and
     * spill files) with sealpipe's cipher: what it writes, JCE's reads back and the other way
     * round, and both equal sealpipe's own CTR stream (Hadoop's format) with the same key and IV.
     */
    @Test
    void commonsCryptoStreamsInterworkWithTheJceCipherAndSealpipesOwnStream() throws Exception {
        byte[] keyBytes = bytes(7, 16);
        byte[] iv = bytes(8, 16);
        byte[] plain = bytes(9, 3 * 8192 + 77);
        Properties ours = new Properties();
        ours.setProperty(CryptoCipherFactory.CLASSES_KEY, SealpipeCryptoCipher.class.getName());
        Properties theirs = new Properties();
        theirs.setProperty(CryptoCipherFactory.CLASSES_KEY, CryptoCipherFactory.CipherProvider.JCE.getClassName());
        SecretKeySpec key = new SecretKeySpec(keyBytes, "AES");
        byte[] byOurs = writeWith(ours, key, iv, plain);
        assertArrayEquals(writeWith(theirs, key, iv, plain), byOurs, "the same ciphertext as Commons Crypto on JCE");
        assertArrayEquals(plain, readWith(theirs, key, iv, byOurs));
        assertArrayEquals(plain, readWith(ours, key, iv, byOurs));
        ByteArrayOutputStream own = new ByteArrayOutputStream();
        try (OutputStream out = CtrStreams.builder().key(keyBytes).iv(iv).build().encrypt(own)) {
            out.write(plain);
        }
        assertArrayEquals(own.toByteArray(), byOurs, "the same ciphertext as sealpipe's CTR stream");
    }

    private static byte[] writeWith(Properties p, SecretKeySpec key, byte[] iv, byte[] plain) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (CryptoOutputStream out = new CryptoOutputStream(CTR, p, sink, key, new IvParameterSpec(iv))) {
            out.write(plain, 0, 1000);
            out.write(plain, 1000, plain.length - 1000);
        }
        return sink.toByteArray();
    }

    private static byte[] readWith(Properties p, SecretKeySpec key, byte[] iv, byte[] sealed) throws IOException {
        try (InputStream in = new CryptoInputStream(CTR, p, new ByteArrayInputStream(sealed), key, new IvParameterSpec(iv))) {
            return in.readAllBytes();
        }
    }
}
