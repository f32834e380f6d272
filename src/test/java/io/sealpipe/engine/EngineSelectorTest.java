package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The selection rule with every combination of inputs, without loading anything. */
class EngineSelectorTest {
    private static final CpuFeatures AESNI = new CpuFeatures("x86_64", true, true, true, false, false, false, "test", false);
    /** An aarch64 CPU with the ARMv8 Crypto Extensions (AES and PMULL), as AT_HWCAP reports them. */
    private static final CpuFeatures ARMV8_AES = new CpuFeatures("aarch64", true, true, false, false, false, false,
            "AT_HWCAP", false);
    private static final Platform LINUX_X86_64 = Platform.of("Linux", "amd64");
    private static final Platform LINUX_AARCH64 = Platform.of("Linux", "aarch64");
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
            CpuFeatures cpu = CpuFeatures.fromProcCpuinfo(file, "x86_64");
            assertTrue(cpu.aesni() && cpu.pclmulqdq() && cpu.avx2() && !cpu.vaes(), cpu.toString());
            java.nio.file.Files.writeString(file, "flags : fpu sse2\n");
            assertTrue(!CpuFeatures.fromProcCpuinfo(file, "x86_64").aesni());
        } finally {
            java.nio.file.Files.delete(file);
        }
    }

    private static EngineReport selectOn(Platform platform, CpuFeatures cpu, JavaRuntime jvm, EngineStatus... statuses) {
        return EngineSelector.select(EngineSettings.defaults(), cpu, jvm, platform, List.of(statuses),
                Optional.of("OpenSSL 3.0.19 27 Jan 2026"), Optional.empty());
    }

    /** The stated rule on aarch64: ARMv8 AES takes the place of AES-NI; no x86 AVX-512 move applies. */
    @Test
    void onAarch64ArmV8AesChoosesOpenSslAndNoOperationMovesToJce() {
        // Even a JVM that claims UseAVX=3 cannot move an operation to jce on an Arm CPU.
        JavaRuntime jvm = new JavaRuntime(17, "OpenJDK 64-Bit Server VM", java.util.OptionalInt.of(3));
        EngineStatus noAccp = EngineStatus.unavailable(EngineKind.ACCP, "not on the class path", null);
        EngineReport r = selectOn(LINUX_AARCH64, ARMV8_AES, jvm, JNI_OK, JNA_OK, JCE_OK, noAccp);
        assertEquals(Optional.of(EngineKind.OPENSSL_JNI), r.chosen());
        assertTrue(r.decision().endsWith("ARMv8 AES present"), r.decision());
        for (Operation op : Operation.values()) {
            assertEquals(Optional.of(EngineKind.OPENSSL_JNI), r.operation(op).engine(), r.operation(op).describe());
        }
        for (Operation op : List.of(Operation.CTR, Operation.GCM_SEAL)) {
            assertTrue(r.operation(op).reason().contains("the moves to jce are rules for HotSpot's x86 AVX-512"
                    + " intrinsics, not for aarch64"), r.operation(op).describe());
        }
        assertEquals(Optional.of(EngineKind.OPENSSL_JNA),
                selectOn(LINUX_AARCH64, ARMV8_AES, jvm, JNI_NO, JNA_OK, JCE_OK, noAccp).chosen());
        // accp's rule stays "when on the class path".
        EngineReport accp = selectOn(LINUX_AARCH64, ARMV8_AES, jvm, JNI_OK, JNA_OK, JCE_OK,
                EngineStatus.available(EngineKind.ACCP, "ACCP 2.5.0"));
        assertEquals(Optional.of(EngineKind.ACCP), accp.operation(Operation.GCM_SEAL).engine());

        EngineReport noAes = selectOn(LINUX_AARCH64, ARMV8_AES.withoutAesni(), jvm, JNI_OK, JNA_OK, JCE_OK, noAccp);
        assertEquals(Optional.of(EngineKind.JCE), noAes.chosen());
        String why = noAes.notChosen().get(EngineKind.OPENSSL_JNI);
        assertTrue(why.contains("no ARMv8 AES") && !why.contains("AES-NI"), why);
    }

    @Test
    void theReportSaysWhereAutosRuleIsNotMeasured() {
        JavaRuntime jvm = new JavaRuntime(17, "OpenJDK 64-Bit Server VM", java.util.OptionalInt.empty());
        EngineReport arm = selectOn(LINUX_AARCH64, ARMV8_AES, jvm, JNI_OK, JNA_OK, JCE_OK);
        assertFalse(arm.autoMeasured());
        assertEquals(LINUX_AARCH64, arm.platform());
        String note = "auto's rule is not measured on linux-aarch64: run `sealpipe speed` here to compare the engines,"
                + " and force one with sealpipe.engine / sealpipe.engine.OP";
        assertEquals(Optional.of(note), arm.autoNote());
        assertTrue(arm.describe().contains("Platform: linux-aarch64\n"), arm.describe());
        assertTrue(arm.describe().contains("Note:    " + note + "\n"), arm.describe());

        for (Platform p : List.of(Platform.of("Mac OS X", "aarch64"), Platform.of("Linux", "x86_64").withMusl(true),
                Platform.of("Windows 11", "amd64"))) {
            EngineReport r = selectOn(p, AESNI, jvm, JNI_NO, JNA_OK, JCE_OK);
            assertFalse(r.autoMeasured(), p.id());
            assertTrue(r.describe().contains("auto's rule is not measured on " + p.id() + ":"), r.describe());
        }

        EngineReport x86 = selectOn(LINUX_X86_64, AESNI, jvm, JNI_OK, JNA_OK, JCE_OK);
        assertTrue(x86.autoMeasured());
        assertEquals(Optional.empty(), x86.autoNote());
        assertFalse(x86.describe().contains("Note:"), x86.describe());
    }
}
