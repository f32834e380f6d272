package io.sealpipe.ctr;

import static io.sealpipe.CtrFixtures.HEX;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.CtrFixtures;
import io.sealpipe.internal.CtrMath;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link CtrMath#counterBlock} against BigInteger: IV + blocks (unsigned) mod 2^128, for the
 * carrying IVs and block counts at every byte and word boundary, plus seeded random ones.
 */
class CtrCounterTest {
    @Test
    void counterBlockIsIvPlusBlocksModulo2To128() {
        List<byte[]> ivs = new ArrayList<>(CtrFixtures.ivs().values());
        Random random = new Random(128);
        for (int i = 0; i < 200; i++) {
            ivs.add(CtrFixtures.bytes(random, 16));
        }
        List<Long> blocks = new ArrayList<>(List.of(0L, 1L, 2L, 255L, 256L, 65535L, 65536L, 0xffffffffL, 0x100000000L,
                Long.MAX_VALUE, Long.MIN_VALUE, -1L, -2L, (Long.MAX_VALUE >>> 4)));
        for (int i = 0; i < 200; i++) {
            blocks.add(random.nextLong());
        }
        List<String> failures = new ArrayList<>();
        byte[] out = new byte[16];
        for (byte[] iv : ivs) {
            byte[] ivCopy = iv.clone();
            for (long b : blocks) {
                CtrMath.counterBlock(iv, b, out);
                BigInteger unsigned = new BigInteger(Long.toUnsignedString(b));
                BigInteger sum = new BigInteger(1, iv).add(unsigned).mod(CtrFixtures.TWO_128);
                String expected = String.format("%032x", sum);
                if (!expected.equals(HEX.formatHex(out))) {
                    failures.add("iv " + HEX.formatHex(iv) + " + " + Long.toUnsignedString(b) + ": " + HEX.formatHex(out)
                            + ", expected " + expected);
                }
            }
            if (!java.util.Arrays.equals(ivCopy, iv)) {
                failures.add("counterBlock modified its IV argument " + HEX.formatHex(ivCopy));
            }
        }
        assertTrue(failures.isEmpty(), CtrFixtures.report(failures));
    }

    @Test
    void theNamedIvsCarryWhereTheirNamesSay() {
        Map<String, byte[]> ivs = CtrFixtures.ivs();
        byte[] out = new byte[16];
        CtrMath.counterBlock(ivs.get("all-ff"), 1, out);
        assertEquals("00000000000000000000000000000000", HEX.formatHex(out));
        CtrMath.counterBlock(ivs.get("low64-ff"), 1, out);
        assertEquals("0123456789abcdf00000000000000000", HEX.formatHex(out));
        CtrMath.counterBlock(ivs.get("low32-fffffffe"), 2, out);
        assertEquals("00112233445566778899aabc00000000", HEX.formatHex(out));
    }
}
