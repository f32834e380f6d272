package io.sealpipe.engine;

import static io.sealpipe.engine.TestEngines.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** NIST SP 800-38A F.5 CTR vectors and counter carry, on every engine and call pattern. */
class CtrVectorsTest {
    private static final byte[] PLAIN = hex("6bc1bee22e409f96e93d7e117393172a" + "ae2d8a571e03ac9c9eb76fac45af8e51"
            + "30c81c46a35ce411e5fbc1191a0a52ef" + "f69f2445df4f9b17ad2b417be66c3710");
    private static final byte[] COUNTER = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");

    /** F.5.1, F.5.3 and F.5.5: key, ciphertext. */
    private static final String[][] VECTORS = {
        {"2b7e151628aed2a6abf7158809cf4f3c",
            "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
                + "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee"},
        {"8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
            "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94"
                + "1e36b26bd1ebc670d1bd1d665620abf74f78a7f6d29809585a97daec58c6b050"},
        {"603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
                + "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6"},
    };

    static java.util.stream.Stream<EngineKind> kinds() {
        return TestEngines.ctrKinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void nistVectorsOneShotBytewiseOddSplitsAndDirect(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        for (String[] v : VECTORS) {
            byte[] key = hex(v[0]);
            byte[] expected = hex(v[1]);
            try (StreamCipher ctr = engine.newAesCtr(key, COUNTER)) {
                assertArrayEquals(expected, oneShot(ctr), kind + " one shot, key " + v[0]);
                ctr.reset(COUNTER);
                assertArrayEquals(expected, byteByByte(ctr), kind + " byte by byte");
                ctr.reset(COUNTER);
                assertArrayEquals(expected, oddSplits(ctr), kind + " odd splits");
                ctr.reset(COUNTER);
                assertArrayEquals(expected, direct(ctr), kind + " direct buffers");
                ctr.reset(COUNTER);
                byte[] inPlace = PLAIN.clone();
                ctr.update(inPlace, 0, inPlace.length, inPlace, 0);
                assertArrayEquals(expected, inPlace, kind + " in place");
                // Decryption is the same operation.
                ctr.reset(COUNTER);
                byte[] back = new byte[expected.length];
                ctr.update(expected, 0, expected.length, back, 0);
                assertArrayEquals(PLAIN, back, kind + " decrypt");
            }
        }
    }

    /** IVs whose counter carries across 32 bits, 64 bits and 2^128 (wraps to zero). */
    @ParameterizedTest
    @MethodSource("kinds")
    void counterCarriesAcrossAllSixteenBytes(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        byte[] key = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
        String[] ivs = {
            "ffffffffffffffffffffffffffffffff", // wraps past 2^128
            "0000000000000000ffffffffffffffff", // carries from the low 64 bits
            "000000000000000000000000fffffffe", // carries from the low 32 bits
            "00000000000000ffffffffffffffffff",
            "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
        };
        Random random = new Random(38);
        for (String ivHex : ivs) {
            byte[] iv = hex(ivHex);
            byte[] plain = new byte[5 * 16 + 7];
            random.nextBytes(plain);
            byte[] expected = referenceCtr(key, iv, plain);
            try (StreamCipher ctr = engine.newAesCtr(key, iv)) {
                assertArrayEquals(expected, oneShotOf(ctr, plain), kind + " iv " + ivHex);
                ctr.reset(iv);
                byte[] out = new byte[plain.length];
                for (int i = 0; i < plain.length; i++) {
                    ctr.update(plain, i, 1, out, i);
                }
                assertArrayEquals(expected, out, kind + " byte by byte, iv " + ivHex);
            }
        }
    }

    /** A reset after a partial block restarts the keystream at the block boundary of the new IV. */
    @ParameterizedTest
    @MethodSource("kinds")
    void resetAfterPartialBlockStartsFresh(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        byte[] key = hex(VECTORS[0][0]);
        try (StreamCipher ctr = engine.newAesCtr(key, COUNTER)) {
            byte[] junk = new byte[5];
            ctr.update(junk, 0, 5, junk, 0);
            ctr.reset(COUNTER);
            assertArrayEquals(hex(VECTORS[0][1]), oneShot(ctr));
        }
    }

    /** Keystream computed independently: AES-ECB of IV + i, counter as a BigInteger mod 2^128. */
    static byte[] referenceCtr(byte[] key, byte[] iv, byte[] plain) throws Exception {
        Cipher ecb = Cipher.getInstance("AES/ECB/NoPadding");
        ecb.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
        BigInteger counter = new BigInteger(1, iv);
        BigInteger modulus = BigInteger.ONE.shiftLeft(128);
        byte[] out = new byte[plain.length];
        for (int block = 0; block * 16 < plain.length; block++) {
            byte[] counterBlock = toSixteenBytes(counter.add(BigInteger.valueOf(block)).mod(modulus));
            byte[] keystream = ecb.doFinal(counterBlock);
            for (int i = 0; i < 16 && block * 16 + i < plain.length; i++) {
                out[block * 16 + i] = (byte) (plain[block * 16 + i] ^ keystream[i]);
            }
        }
        return out;
    }

    private static byte[] toSixteenBytes(BigInteger value) {
        byte[] raw = value.toByteArray();
        byte[] out = new byte[16];
        int n = Math.min(raw.length, 16);
        System.arraycopy(raw, raw.length - n, out, 16 - n, n);
        return out;
    }

    private static byte[] oneShot(StreamCipher c) {
        return oneShotOf(c, PLAIN);
    }

    private static byte[] oneShotOf(StreamCipher c, byte[] plain) {
        byte[] out = new byte[plain.length];
        c.update(plain, 0, plain.length, out, 0);
        return out;
    }

    private static byte[] byteByByte(StreamCipher c) {
        byte[] out = new byte[PLAIN.length];
        for (int i = 0; i < PLAIN.length; i++) {
            c.update(PLAIN, i, 1, out, i);
        }
        return out;
    }

    private static byte[] oddSplits(StreamCipher c) {
        // Offsets inside larger arrays, splits not on block boundaries.
        byte[] in = new byte[PLAIN.length + 7];
        System.arraycopy(PLAIN, 0, in, 3, PLAIN.length);
        byte[] out = new byte[PLAIN.length + 11];
        int[] splits = {5, 11, 16, 1, 31};
        int done = 0;
        for (int n : splits) {
            c.update(in, 3 + done, n, out, 9 + done);
            done += n;
        }
        return Arrays.copyOfRange(out, 9, 9 + PLAIN.length);
    }

    private static byte[] direct(StreamCipher c) {
        ByteBuffer in = ByteBuffer.allocateDirect(PLAIN.length + 4);
        in.position(4);
        in.put(PLAIN).flip().position(4);
        ByteBuffer out = ByteBuffer.allocateDirect(PLAIN.length + 2);
        out.position(2);
        int n = c.update(in.slice(4, 20), out);
        c.update(in.position(24), out);
        byte[] result = new byte[PLAIN.length];
        out.flip().position(2);
        out.get(result);
        return n == 20 ? result : null;
    }
}
