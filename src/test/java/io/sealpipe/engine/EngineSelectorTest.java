package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The selection rule with every combination of inputs, without loading anything. */
class EngineSelectorTest {
    private static final CpuFeatures AESNI = new CpuFeatures(true, true, true, false, false, false, "test", false);
    private static final CpuFeatures NO_AESNI = AESNI.withoutAesni();

    private static final EngineStatus JNI_OK = EngineStatus.available(EngineKind.OPENSSL_JNI, "OpenSSL 3 via JNI");
    private static final EngineStatus JNA_OK = EngineStatus.available(EngineKind.OPENSSL_JNA, "OpenSSL 3 via JNA");
    private static final EngineStatus JCE_OK = EngineStatus.available(EngineKind.JCE, "SunJCE");
    private static final EngineStatus JNI_NO =
            EngineStatus.unavailable(EngineKind.OPENSSL_JNI, "libcrypto did not load: nowhere", null);
    private static final EngineStatus JNA_NO =
            EngineStatus.unavailable(EngineKind.OPENSSL_JNA, "cannot open libcrypto through JNA", null);

    private static EngineReport select(EngineSettings settings, CpuFeatures cpu, EngineStatus... statuses) {
        return EngineSelector.select(settings, cpu, List.of(statuses), Optional.empty(), Optional.empty());
    }

    private static EngineSettings forced(EngineKind kind) {
        return EngineSettings.defaults().withEngine(Optional.of(kind));
    }

    private static final EngineSettings REQUIRE_OPENSSL = new EngineSettings(Optional.empty(), true, false, null, null);

    @Test
    void autoPrefersJniThenJnaWithAesni() {
        EngineReport r = select(EngineSettings.defaults(), AESNI, JNI_OK, JNA_OK, JCE_OK);
        assertEquals(Optional.of(EngineKind.OPENSSL_JNI), r.chosen());
        assertEquals("openssl-jni is preferred", r.notChosen().get(EngineKind.OPENSSL_JNA));

        r = select(EngineSettings.defaults(), AESNI, JNI_NO, JNA_OK, JCE_OK);
        assertEquals(Optional.of(EngineKind.OPENSSL_JNA), r.chosen());
        assertTrue(r.notChosen().get(EngineKind.OPENSSL_JNI).contains("libcrypto did not load"));
    }

    @Test
    void noAesniMeansJceWithTheReasonForEachOpenSslEngine() {
        EngineReport r = select(EngineSettings.defaults(), NO_AESNI, JNI_OK, JNA_OK, JCE_OK);
        assertEquals(Optional.of(EngineKind.JCE), r.chosen());
        assertTrue(r.notChosen().get(EngineKind.OPENSSL_JNI).contains("no AES-NI"), r.notChosen().toString());
        assertTrue(r.notChosen().get(EngineKind.OPENSSL_JNA).contains("sealpipe.cpu.aesni=false"), r.notChosen().toString());
        assertTrue(r.decision().contains("auto: JCE"), r.decision());
    }

    @Test
    void noLibcryptoMeansJceWithReasons() {
        EngineReport r = select(EngineSettings.defaults(), AESNI, JNI_NO, JNA_NO, JCE_OK);
        assertEquals(Optional.of(EngineKind.JCE), r.chosen());
        assertTrue(r.notChosen().get(EngineKind.OPENSSL_JNA).contains("JNA"));
    }

    @Test
    void requireOpenSslTurnsTheFallbackIntoAnError() {
        EngineReport r = select(REQUIRE_OPENSSL, AESNI, JNI_NO, JNA_NO, JCE_OK);
        assertEquals(Optional.empty(), r.chosen());
        assertTrue(r.decision().contains("sealpipe.engine.require=openssl"), r.decision());
        assertTrue(r.decision().contains("install OpenSSL"), r.decision());

        assertEquals(Optional.of(EngineKind.OPENSSL_JNA), select(REQUIRE_OPENSSL, AESNI, JNI_NO, JNA_OK, JCE_OK).chosen());
        assertEquals(Optional.empty(), select(REQUIRE_OPENSSL, NO_AESNI, JNI_OK, JNA_OK, JCE_OK).chosen());
    }

    @Test
    void anExplicitLibcryptoThatDoesNotLoadIsAnErrorNotAFallback() {
        EngineSettings explicit = new EngineSettings(Optional.empty(), false, false, "/opt/ssl/libcrypto.so.3", null);
        EngineReport r = select(explicit, AESNI, JNI_NO, JNA_NO, JCE_OK);
        assertEquals(Optional.empty(), r.chosen(), "no silent fallback from an explicit libcrypto");
        for (String part : List.of("sealpipe.openssl.libcrypto=/opt/ssl/libcrypto.so.3 did not load",
                "openssl-jni: libcrypto did not load: nowhere", "openssl-jna: cannot open libcrypto through JNA",
                "fix the path or unset the property")) {
            assertTrue(r.decision().contains(part), r.decision());
        }
        assertTrue(r.notChosen().get(EngineKind.OPENSSL_JNI).contains("libcrypto did not load"), r.notChosen().toString());

        EngineSettings required = new EngineSettings(Optional.empty(), true, false, "/opt/ssl/libcrypto.so.3", null);
        assertTrue(select(required, AESNI, JNI_NO, JNA_NO, JCE_OK).decision().contains("did not load"));

        // It loaded through one engine: used. It loaded, but auto does not use OpenSSL without AES-NI: JCE.
        assertEquals(Optional.of(EngineKind.OPENSSL_JNA), select(explicit, AESNI, JNI_NO, JNA_OK, JCE_OK).chosen());
        assertEquals(Optional.of(EngineKind.JCE), select(explicit, NO_AESNI, JNI_OK, JNA_OK, JCE_OK).chosen());
        // A forced jce does not use libcrypto at all.
        assertEquals(Optional.of(EngineKind.JCE),
                select(explicit.withEngine(Optional.of(EngineKind.JCE)), AESNI, JNI_NO, JNA_NO, JCE_OK).chosen());
    }

    @Test
    void forcedEnginesAreUsedOrFailWithTheReason() {
        for (EngineKind kind : EngineKind.values()) {
            EngineReport r = select(forced(kind), AESNI, JNI_OK, JNA_OK, JCE_OK,
                    EngineStatus.available(EngineKind.ACCP, "ACCP"));
            assertEquals(Optional.of(kind), r.chosen());
            assertTrue(r.decision().contains("forced"), r.decision());
        }
        EngineReport noAesni = select(forced(EngineKind.OPENSSL_JNI), NO_AESNI, JNI_OK, JNA_OK, JCE_OK);
        assertEquals(Optional.of(EngineKind.OPENSSL_JNI), noAesni.chosen(), "forcing overrides the AES-NI rule");
        assertTrue(noAesni.decision().contains("no AES-NI"));

        EngineReport missing = select(forced(EngineKind.OPENSSL_JNI), AESNI, JNI_NO, JNA_OK, JCE_OK);
        assertEquals(Optional.empty(), missing.chosen(), "no silent fallback from a forced engine");
        assertTrue(missing.decision().contains("libcrypto did not load"), missing.decision());

        EngineSettings contradictory = new EngineSettings(Optional.of(EngineKind.JCE), true, false, null, null);
        assertTrue(select(contradictory, AESNI, JNI_OK, JNA_OK, JCE_OK).decision().contains("contradicts"));
    }

    @Test
    void settingsParseAndNameBadValues() {
        assertEquals(Optional.empty(), EngineSettings.parseEngine("auto"));
        assertEquals(Optional.of(EngineKind.OPENSSL_JNA), EngineSettings.parseEngine(" OpenSSL-JNA "));
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> EngineSettings.parseEngine("bogus"));
        assertTrue(e.getMessage().contains("sealpipe.engine=bogus") && e.getMessage().contains("openssl-jni"),
                e.getMessage());
    }

    @Test
    void cpuinfoFallbackReadsFlags() throws Exception {
        java.nio.file.Path file = java.nio.file.Files.createTempFile("cpuinfo", "");
        try {
            java.nio.file.Files.writeString(file, "processor : 0\nflags\t\t: fpu sse2 aes avx2 pclmulqdq\n");
            CpuFeatures cpu = CpuFeatures.fromProcCpuinfo(file);
            assertTrue(cpu.aesni() && cpu.pclmulqdq() && cpu.avx2() && !cpu.vaes(), cpu.toString());
            java.nio.file.Files.writeString(file, "flags : fpu sse2\n");
            assertTrue(!CpuFeatures.fromProcCpuinfo(file).aesni());
        } finally {
            java.nio.file.Files.delete(file);
        }
    }
}
