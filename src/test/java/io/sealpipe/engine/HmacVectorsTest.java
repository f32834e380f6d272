package io.sealpipe.engine;

import static io.sealpipe.engine.TestEngines.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** RFC 4231 HMAC-SHA256 test cases 1-7 (case 5 truncated to 128 bits), on every engine. */
class HmacVectorsTest {

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] repeat(int b, int n) {
        byte[] out = new byte[n];
        Arrays.fill(out, (byte) b);
        return out;
    }

    private static byte[] oneTo25() {
        byte[] out = new byte[25];
        for (int i = 0; i < 25; i++) {
            out[i] = (byte) (i + 1);
        }
        return out;
    }

    private static final Object[][] CASES = {
        {repeat(0x0b, 20), ascii("Hi There"), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {ascii("Jefe"), ascii("what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {repeat(0xaa, 20), repeat(0xdd, 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {oneTo25(), repeat(0xcd, 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {repeat(0x0c, 20), ascii("Test With Truncation"), "a3b6167473100ee06e0c796c2955552b"},
        {repeat(0xaa, 131), ascii("Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
        {repeat(0xaa, 131), ascii("This is a test using a larger than block-size key and a larger than block-size"
                + " data. The key needs to be hashed before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };

    static java.util.stream.Stream<EngineKind> kinds() {
        return TestEngines.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void rfc4231(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        for (Object[] c : CASES) {
            byte[] key = (byte[]) c[0];
            byte[] data = (byte[]) c[1];
            byte[] expected = hex((String) c[2]);
            try (Hmac mac = engine.newHmacSha256(key)) {
                byte[] out = new byte[32];
                mac.update(data, 0, data.length);
                mac.doFinal(out, 0);
                assertArrayEquals(expected, Arrays.copyOf(out, expected.length), kind + " one shot");

                // The same MAC restarts after doFinal; feed it byte by byte, then as a direct buffer.
                for (byte b : data) {
                    mac.update(new byte[] {b}, 0, 1);
                }
                mac.doFinal(out, 0);
                assertArrayEquals(expected, Arrays.copyOf(out, expected.length), kind + " byte by byte");

                ByteBuffer direct = ByteBuffer.allocateDirect(data.length).put(data).flip();
                mac.update(direct);
                byte[] shifted = new byte[40];
                mac.doFinal(shifted, 8);
                assertArrayEquals(expected, Arrays.copyOfRange(shifted, 8, 8 + expected.length), kind + " direct");
            }
        }
    }
}
