package io.sealpipe.gcm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * {@link Cobblestone#hkdfExpandSha512} computes HMAC-SHA-512 itself (so that it can wipe every
 * copy of the key it makes); here it is checked against HKDF-Expand built on the JDK's
 * {@link Mac}, for keys shorter than, as long as and longer than SHA-512's 128-byte block (a
 * longer key is hashed first), and output lengths around the 64-byte HMAC output. The Wycheproof
 * vectors ({@link CobblestoneHkdfTest}) only have 64-byte keys.
 */
class CobblestoneHmacTest {
    @Test
    void expandMatchesHkdfOnTheJdkMac() throws GeneralSecurityException {
        List<String> failures = new ArrayList<>();
        Random random = new Random(0x4B44F);
        int run = 0;
        for (int keyLength : new int[] {1, 16, 32, 64, 127, 128, 129, 200, 300}) {
            for (int length : new int[] {0, 1, 60, 64, 65, 76, 128, 129, 1000}) {
                byte[] key = new byte[keyLength];
                byte[] info = new byte[random.nextInt(100)];
                random.nextBytes(key);
                random.nextBytes(info);
                byte[] expected = expandWithMac(key, info, length);
                byte[] actual = Cobblestone.hkdfExpandSha512(key, info, length);
                run++;
                if (!Arrays.equals(expected, actual)) {
                    failures.add("key " + keyLength + " bytes, output " + length + ": " + HexFormat.of().formatHex(actual));
                }
            }
        }
        assertEquals(List.of(), failures, failures.size() + " of " + run + " differ");
    }

    @Test
    void anEmptyKeyIsRefused() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> Cobblestone.hkdfExpandSha512(new byte[0], new byte[1], 32));
        assertEquals("HKDF key must not be empty", e.getMessage());
    }

    /** RFC 5869 section 2.3 on javax.crypto.Mac: T(i) = HMAC(PRK, T(i-1) || info || i). */
    private static byte[] expandWithMac(byte[] prk, byte[] info, int length) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA512");
        mac.init(new SecretKeySpec(prk, "HmacSHA512"));
        byte[] okm = new byte[length];
        byte[] t = new byte[0];
        for (int i = 1, done = 0; done < length; i++) {
            mac.update(t);
            mac.update(info);
            mac.update((byte) i);
            t = mac.doFinal();
            int n = Math.min(t.length, length - done);
            System.arraycopy(t, 0, okm, done, n);
            done += n;
        }
        return okm;
    }
}
