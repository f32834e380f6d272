package io.sealpipe.ctr;

import static io.sealpipe.CtrFixtures.HEX;
import static io.sealpipe.CtrFixtures.check;
import static io.sealpipe.CtrFixtures.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sealpipe.CtrFixtures;
import io.sealpipe.engine.EngineKind;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Frozen ciphertexts, so a format change cannot slip by: NIST SP 800-38A F.5.1/F.5.2 (whose
 * counter carries from byte 15 into byte 14 after the first block), and
 * {@code src/test/resources/ctr/golden-vectors.json}, made once by Commons Crypto 1.2.0 over the
 * carrying IVs, unaligned offsets and offsets near 2^62 and Long.MAX_VALUE.
 */
class CtrGoldenTest {
    // NIST SP 800-38A, F.5.1 CTR-AES128.Encrypt (F.5.2 is the same in reverse).
    private static final byte[] NIST_KEY = HEX.parseHex("2b7e151628aed2a6abf7158809cf4f3c");
    private static final byte[] NIST_COUNTER = HEX.parseHex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
    private static final byte[] NIST_PLAIN = HEX.parseHex("6bc1bee22e409f96e93d7e117393172a"
            + "ae2d8a571e03ac9c9eb76fac45af8e51" + "30c81c46a35ce411e5fbc1191a0a52ef" + "f69f2445df4f9b17ad2b417be66c3710");
    private static final byte[] NIST_CIPHER = HEX.parseHex("874d6191b620e3261bef6864990db6ce"
            + "9806f66b7970fdff8617187bb9fffdff" + "5ae4df3edbd5d35e5b4f09020db03eab" + "1e031dda2fbe03d1792170a0f3009cee");

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void nistSp800_38aF5(EngineKind kind) throws IOException {
        List<String> failures = new ArrayList<>();
        // Whole, and from every stream offset 0..63 (the tail of the vector at that offset).
        for (int offset = 0; offset < NIST_PLAIN.length; offset++) {
            CtrStreams ctr = CtrFixtures.builder(kind, NIST_KEY, NIST_COUNTER).streamOffset(offset).build();
            byte[] plain = java.util.Arrays.copyOfRange(NIST_PLAIN, offset, NIST_PLAIN.length);
            byte[] cipher = java.util.Arrays.copyOfRange(NIST_CIPHER, offset, NIST_CIPHER.length);
            check(failures, kind + " encrypt from " + offset, cipher, encrypt(ctr, plain));
            check(failures, kind + " decrypt from " + offset, plain, decrypt(ctr, cipher));
        }
        assertTrue(failures.isEmpty(), report(failures));
    }

    @Test
    void theReferenceGivesTheNistVector() {
        assertEquals(HEX.formatHex(NIST_CIPHER), HEX.formatHex(CtrFixtures.referenceCtr(NIST_KEY, NIST_COUNTER, 0, NIST_PLAIN)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void goldenVectors(EngineKind kind) throws IOException {
        List<String> failures = new ArrayList<>();
        int count = 0;
        for (JsonNode v : load().get("vectors")) {
            byte[] key = HEX.parseHex(v.get("key").asText());
            byte[] iv = HEX.parseHex(v.get("iv").asText());
            long offset = v.get("streamOffset").asLong();
            byte[] cipher = HEX.parseHex(v.get("ciphertext").asText());
            byte[] plain = new byte[v.get("length").asInt()];
            for (int i = 0; i < plain.length; i++) {
                plain[i] = (byte) (7 * i + 3);
            }
            String where = kind + " vector " + count++ + " (key " + key.length + ", iv " + v.get("iv").asText()
                    + ", offset " + offset + ")";
            CtrStreams ctr = CtrFixtures.builder(kind, key, iv).streamOffset(offset).build();
            check(failures, where + " encrypt", cipher, encrypt(ctr, plain));
            check(failures, where + " decrypt", plain, decrypt(ctr, cipher));
            check(failures, where + " reference", cipher, CtrFixtures.referenceCtr(key, iv, offset, plain));
        }
        assertEquals(12, count, "vectors in golden-vectors.json");
        assertTrue(failures.isEmpty(), report(failures));
    }

    private static JsonNode load() throws IOException {
        try (InputStream in = CtrGoldenTest.class.getResourceAsStream("/ctr/golden-vectors.json")) {
            if (in == null) {
                throw new IOException("missing test resource /ctr/golden-vectors.json");
            }
            return new ObjectMapper().readTree(in);
        }
    }

    private static byte[] encrypt(CtrStreams ctr, byte[] plain) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (CryptoOutputStream out = ctr.encrypt(bytes)) {
            out.write(plain);
        }
        return bytes.toByteArray();
    }

    private static byte[] decrypt(CtrStreams ctr, byte[] cipher) throws IOException {
        try (CryptoInputStream in = ctr.decrypt(new ByteArrayInputStream(cipher))) {
            return in.readAllBytes();
        }
    }
}
