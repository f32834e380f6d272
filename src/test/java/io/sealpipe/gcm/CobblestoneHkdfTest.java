package io.sealpipe.gcm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Wycheproof's {@code hkdf_sha512_test.json} against {@link Cobblestone#hkdfExpandSha512}, the
 * key schedule of the chunked format. The vectors are whole HKDF (extract, then expand), and
 * the format uses expand alone, so the test computes PRK = HMAC-SHA-512(salt, ikm) itself with
 * {@link Mac} (an empty salt is 64 zero bytes, RFC 5869 section 2.2) and compares the expansion
 * with okm. The invalid vectors ask for more than 255 * 64 bytes, which must be refused.
 */
class CobblestoneHkdfTest {
    private static final String RESOURCE = "/vectors/wycheproof/hkdf_sha512_test.json";
    private static final HexFormat HEX = HexFormat.of();
    private static final int MAX_OUTPUT = 255 * 64;

    @Test
    void wycheproofHkdfSha512() throws IOException, GeneralSecurityException {
        JsonNode root = load();
        List<String> failures = new ArrayList<>();
        int run = 0;
        int invalid = 0;
        for (JsonNode group : root.get("testGroups")) {
            for (JsonNode test : group.get("tests")) {
                run++;
                String id = "tcId " + test.get("tcId").asInt() + " " + test.get("flags");
                byte[] prk = extract(HEX.parseHex(test.get("salt").asText()), HEX.parseHex(test.get("ikm").asText()));
                byte[] info = HEX.parseHex(test.get("info").asText());
                int size = test.get("size").asInt();
                try {
                    if (test.get("result").asText().equals("valid")) {
                        if (size > MAX_OUTPUT) {
                            failures.add(id + ": a valid vector asks for " + size + " bytes");
                            continue;
                        }
                        byte[] okm = Cobblestone.hkdfExpandSha512(prk, info, size);
                        if (!Arrays.equals(HEX.parseHex(test.get("okm").asText()), okm)) {
                            failures.add(id + ": expand gave " + HEX.formatHex(okm));
                        }
                    } else {
                        invalid++;
                        try {
                            byte[] okm = Cobblestone.hkdfExpandSha512(prk, info, size);
                            failures.add(id + ": " + size + " bytes were allowed (" + okm.length + " returned)");
                        } catch (IllegalArgumentException expected) {
                            if (!String.valueOf(expected.getMessage()).contains(Integer.toString(size))) {
                                failures.add(id + ": the message does not name the size: " + expected.getMessage());
                            }
                        }
                    }
                } catch (RuntimeException e) {
                    failures.add(id + ": " + e);
                }
            }
        }
        assertEquals(root.get("numberOfTests").asInt(), run, "numberOfTests");
        assertEquals(3, invalid, "SizeTooLarge vectors");
        assertEquals(List.of(), failures, failures.size() + " of " + run + " cases failed");
    }

    /** Lengths at the edges: 0, one block, one byte past it, the maximum; and beyond both ends. */
    @Test
    void outputLengthsAndTheirLimits() throws GeneralSecurityException {
        byte[] prk = extract(new byte[0], HEX.parseHex("000102030405060708090a0b0c0d0e0f"));
        byte[] info = "c2sp.org/chunked-encryption@v1+AEAD_AES_256_GCM".getBytes(StandardCharsets.US_ASCII);
        byte[] longest = Cobblestone.hkdfExpandSha512(prk, info, MAX_OUTPUT);
        assertEquals(MAX_OUTPUT, longest.length);
        for (int length : new int[] {0, 1, 63, 64, 65, 76, 128, 129, MAX_OUTPUT - 1}) {
            // T(1) || T(2) || ... does not depend on L: a shorter output is a prefix of a longer one.
            assertArrayEquals(Arrays.copyOf(longest, length), Cobblestone.hkdfExpandSha512(prk, info, length),
                    "length " + length);
        }
        assertThrows(IllegalArgumentException.class, () -> Cobblestone.hkdfExpandSha512(prk, info, MAX_OUTPUT + 1));
        assertThrows(IllegalArgumentException.class, () -> Cobblestone.hkdfExpandSha512(prk, info, -1));
    }

    /** HKDF-Extract (RFC 5869, section 2.2) with HMAC-SHA-512. */
    private static byte[] extract(byte[] salt, byte[] ikm) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA512");
        mac.init(new SecretKeySpec(salt.length == 0 ? new byte[64] : salt, "HmacSHA512"));
        return mac.doFinal(ikm);
    }

    private static JsonNode load() throws IOException {
        try (InputStream in = CobblestoneHkdfTest.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException("missing test resource " + RESOURCE);
            }
            return new ObjectMapper().readTree(in);
        }
    }
}
