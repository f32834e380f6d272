package io.sealpipe.engine;

import static io.sealpipe.engine.TestEngines.hex;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.AEADBadTagException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Wycheproof aes_gcm_test.json: every case with a 12-byte nonce and 16-byte tag, valid and
 * invalid, sealed and opened with heap and direct buffers. Failures are collected, then
 * asserted empty, so one run shows them all.
 */
class GcmWycheproofTest {

    static java.util.stream.Stream<EngineKind> kinds() {
        return TestEngines.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void everyTwelveByteNonceCase(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        JsonNode root;
        try (InputStream in = getClass().getResourceAsStream("/vectors/wycheproof/aes_gcm_test.json")) {
            root = new ObjectMapper().readTree(in);
        }
        List<String> failures = new ArrayList<>();
        int run = 0;
        for (JsonNode group : root.get("testGroups")) {
            if (group.get("ivSize").asInt() != 96 || group.get("tagSize").asInt() != 128) {
                continue;
            }
            for (JsonNode test : group.get("tests")) {
                run++;
                String id = "tcId " + test.get("tcId").asInt() + " (" + test.get("comment").asText() + ")";
                try {
                    String problem = check(engine, test);
                    if (problem != null) {
                        failures.add(id + ": " + problem);
                    }
                } catch (Exception | AssertionError e) {
                    failures.add(id + ": " + e);
                }
            }
        }
        assertTrue(run >= 190, "expected the ~197 twelve-byte-nonce cases, ran " + run);
        assertEquals(List.of(), failures, kind + ": " + failures.size() + " of " + run + " cases failed");
    }

    private static String check(CryptoEngine engine, JsonNode test) throws Exception {
        byte[] key = hex(test.get("key").asText());
        byte[] nonce = hex(test.get("iv").asText());
        byte[] aad = hex(test.get("aad").asText());
        byte[] msg = hex(test.get("msg").asText());
        byte[] sealed = hex(test.get("ct").asText() + test.get("tag").asText());
        boolean valid = test.get("result").asText().equals("valid");
        try (AeadCipher gcm = engine.newAesGcm(key)) {
            if (valid) {
                byte[] out = new byte[sealed.length];
                gcm.seal(nonce, aad, msg, 0, msg.length, out, 0);
                if (!Arrays.equals(sealed, out)) {
                    return "seal gave " + HexFormat.of().formatHex(out);
                }
                byte[] plain = new byte[msg.length];
                gcm.open(nonce, aad, sealed, 0, sealed.length, plain, 0);
                if (!Arrays.equals(msg, plain)) {
                    return "open gave " + HexFormat.of().formatHex(plain);
                }
                ByteBuffer direct = ByteBuffer.allocateDirect(msg.length);
                gcm.open(nonce, aad.length == 0 ? null : aad, ByteBuffer.wrap(sealed), direct);
                byte[] fromDirect = new byte[msg.length];
                direct.flip().get(fromDirect);
                if (!Arrays.equals(msg, fromDirect)) {
                    return "open into a direct buffer gave " + HexFormat.of().formatHex(fromDirect);
                }
                return null;
            }
            byte[] plain = new byte[Math.max(0, sealed.length - 16)];
            Arrays.fill(plain, (byte) 0x5a);
            try {
                gcm.open(nonce, aad, sealed, 0, sealed.length, plain, 0);
                return "invalid case opened";
            } catch (AEADBadTagException expected) {
                for (byte b : plain) {
                    if (b != 0 && b != 0x5a) {
                        return "rejected but left decrypted bytes in the output";
                    }
                }
                return null;
            }
        }
    }
}
