package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The per-operation rule on the two host families it was measured on, and its overrides. Probes
 * nothing: the CPU, the JVM and each engine's status are given.
 */
class OperationChoiceTest {
    /** Intel Xeon (Sapphire/Emerald Rapids, Ice Lake): AVX-512 with VAES and VPCLMULQDQ. */
    static final CpuFeatures XEON = new CpuFeatures("x86_64", true, true, true, true, true, true, "test", false);
    /** AMD EPYC Zen 3: VAES and VPCLMULQDQ on 256-bit vectors, no AVX-512. */
    static final CpuFeatures ZEN3 = new CpuFeatures("x86_64", true, true, true, true, true, false, "test", false);

    static final JavaRuntime HOTSPOT_17 = new JavaRuntime(17, "OpenJDK 64-Bit Server VM", OptionalInt.of(3));
    static final JavaRuntime HOTSPOT_17_AVX2 = new JavaRuntime(17, "OpenJDK 64-Bit Server VM", OptionalInt.of(2));
    static final JavaRuntime ZEN3_JVM = new JavaRuntime(17, "OpenJDK 64-Bit Server VM", OptionalInt.empty());

    static final EngineStatus JNI = EngineStatus.available(EngineKind.OPENSSL_JNI, "OpenSSL 3 via JNI");
    static final EngineStatus JNA = EngineStatus.available(EngineKind.OPENSSL_JNA, "OpenSSL 3 via JNA");
    static final EngineStatus JCE = EngineStatus.available(EngineKind.JCE, "SunJCE");
    static final EngineStatus ACCP = EngineStatus.available(EngineKind.ACCP, "ACCP 2.5.0");
    static final EngineStatus NO_ACCP = EngineStatus.unavailable(EngineKind.ACCP, "not on the class path", null);

    static final Optional<String> OPENSSL_30 = Optional.of("OpenSSL 3.0.19 27 Jan 2026");

    private static EngineReport select(EngineSettings s, CpuFeatures cpu, JavaRuntime jvm, EngineStatus accp,
            Optional<String> openssl) {
        return EngineSelector.select(s, cpu, jvm, List.of(JNI, JNA, JCE, accp), openssl, Optional.empty());
    }

    private static Map<Operation, EngineKind> engines(EngineReport r) {
        Map<Operation, EngineKind> m = new java.util.EnumMap<>(Operation.class);
        r.operations().forEach((op, c) -> m.put(op, c.engine().orElse(null)));
        return m;
    }

    @Test
    void onAnAvx512XeonCtrAndGcmSealingGoToJceWarmingUpBehindOpenSsl() {
        EngineReport r = select(EngineSettings.defaults(), XEON, HOTSPOT_17, NO_ACCP, OPENSSL_30);
        assertEquals(Optional.of(EngineKind.OPENSSL_JNI), r.chosen());
        assertEquals(Map.of(Operation.CTR, EngineKind.JCE, Operation.GCM_SEAL, EngineKind.JCE,
                Operation.GCM_OPEN, EngineKind.OPENSSL_JNI, Operation.CFB, EngineKind.OPENSSL_JNI,
                Operation.HMAC_SHA256, EngineKind.OPENSSL_JNI), engines(r));
        assertEquals(Optional.of(EngineKind.OPENSSL_JNI), r.operation(Operation.CTR).until());
        assertTrue(r.operation(Operation.CTR).reason().contains("AVX-512"), r.operation(Operation.CTR).reason());
        assertTrue(r.describe().contains("ctr: jce (openssl-jni until jce is warm)"), r.describe());
    }

    @Test
    void onAZen3EpycEverythingStaysOnOpenSsl() {
        EngineReport r = select(EngineSettings.defaults(), ZEN3, ZEN3_JVM, NO_ACCP, OPENSSL_30);
        r.operations().values().forEach(c -> {
            assertEquals(Optional.of(EngineKind.OPENSSL_JNI), c.engine(), c.describe());
            assertEquals(Optional.empty(), c.until(), c.describe());
        });
        assertTrue(r.operation(Operation.CTR).reason().contains("no AVX-512 AES-CTR intrinsic"),
                r.operation(Operation.CTR).reason());
    }

    @Test
    void aJvmHeldToAvx2OrANewerOpenSslKeepsOpenSsl() {
        EngineReport avx2 = select(EngineSettings.defaults(), XEON, HOTSPOT_17_AVX2, NO_ACCP, OPENSSL_30);
        assertEquals(EngineKind.OPENSSL_JNI, engines(avx2).get(Operation.CTR));
        assertEquals(EngineKind.OPENSSL_JNI, engines(avx2).get(Operation.GCM_SEAL));

        EngineReport openssl35 = select(EngineSettings.defaults(), XEON, HOTSPOT_17, NO_ACCP,
                Optional.of("OpenSSL 3.5.1 1 Jul 2025"));
        assertEquals(EngineKind.JCE, engines(openssl35).get(Operation.CTR), "no OpenSSL has VAES AES-CTR");
        assertEquals(EngineKind.OPENSSL_JNI, engines(openssl35).get(Operation.GCM_SEAL));
        assertTrue(openssl35.operation(Operation.GCM_SEAL).reason().contains("3.1"));
    }

    @Test
    void accpTakesGcmWhereverItIsOnTheClassPathAndLoadsBehindTheBaseEngine() {
        for (CpuFeatures cpu : List.of(XEON, ZEN3)) {
            EngineReport r = select(EngineSettings.defaults(), cpu, cpu == XEON ? HOTSPOT_17 : ZEN3_JVM, ACCP, OPENSSL_30);
            assertEquals(EngineKind.ACCP, engines(r).get(Operation.GCM_SEAL));
            assertEquals(EngineKind.ACCP, engines(r).get(Operation.GCM_OPEN));
            assertEquals(Optional.of(EngineKind.OPENSSL_JNI), r.operation(Operation.GCM_OPEN).until());
            assertTrue(r.operation(Operation.GCM_SEAL).describe().contains("until accp has loaded"));
            assertEquals(Optional.of(EngineKind.OPENSSL_JNI), r.chosen(), "accp never becomes the base engine");
        }
    }

    @Test
    void underCheckJniAccpIsLeftOutAndTheReasonSaysWhy() {
        JavaRuntime checked = new JavaRuntime(17, "OpenJDK 64-Bit Server VM", OptionalInt.of(3), true);
        EngineReport r = select(EngineSettings.defaults(), XEON, checked, ACCP, OPENSSL_30);
        assertEquals(EngineKind.JCE, engines(r).get(Operation.GCM_SEAL), "the rule without accp");
        assertEquals(EngineKind.OPENSSL_JNI, engines(r).get(Operation.GCM_OPEN));
        assertTrue(r.operation(Operation.GCM_OPEN).reason().contains("accp is not used under -Xcheck:jni"),
                r.operation(Operation.GCM_OPEN).reason());
    }

    @Test
    void perOperationPropertiesWinAndTheirMistakesAreNamed() {
        Properties p = new Properties();
        p.setProperty("sealpipe.engine.ctr", "openssl-jna");
        p.setProperty("sealpipe.engine.gcm", "jce");
        p.setProperty("sealpipe.engine.gcm-open", "openssl-jni");
        EngineSettings s = EngineSettings.fromProperties(p);
        EngineReport r = select(s, XEON, HOTSPOT_17, ACCP, OPENSSL_30);
        assertEquals(EngineKind.OPENSSL_JNA, engines(r).get(Operation.CTR));
        assertEquals(EngineKind.JCE, engines(r).get(Operation.GCM_SEAL));
        assertEquals(EngineKind.OPENSSL_JNI, engines(r).get(Operation.GCM_OPEN), "the specific property wins");
        assertEquals(Optional.empty(), r.operation(Operation.CTR).until(), "a forced engine runs from the first call");
        assertTrue(r.operation(Operation.CTR).reason().contains("forced by sealpipe.engine.ctr=openssl-jna"));

        Properties typo = new Properties();
        typo.setProperty("sealpipe.engine.gmc", "jce");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EngineSettings.fromProperties(typo));
        assertTrue(e.getMessage().contains("sealpipe.engine.gmc") && e.getMessage().contains("gcm-seal"), e.getMessage());

        Properties lacking = new Properties();
        lacking.setProperty("sealpipe.engine.ctr", "accp");
        e = assertThrows(IllegalArgumentException.class, () -> EngineSettings.fromProperties(lacking));
        assertTrue(e.getMessage().contains("accp has no ctr"), e.getMessage());

        Properties badWarmup = new Properties();
        badWarmup.setProperty("sealpipe.engine.warmup", "maybe");
        assertThrows(IllegalArgumentException.class, () -> EngineSettings.fromProperties(badWarmup));
    }

    @Test
    void anUnavailableForcedOperationEngineIsAnErrorForThatOperation() {
        Properties p = new Properties();
        p.setProperty("sealpipe.engine.gcm-seal", "accp");
        EngineReport r = select(EngineSettings.fromProperties(p), XEON, HOTSPOT_17, NO_ACCP, OPENSSL_30);
        assertEquals(Optional.empty(), r.operation(Operation.GCM_SEAL).engine());
        assertTrue(r.operation(Operation.GCM_SEAL).reason().contains("not on the class path"));
    }

    @Test
    void aForcedEngineRunsEverythingItHasAndAutoTheRest() {
        EngineSettings accp = EngineSettings.defaults().withEngine(Optional.of(EngineKind.ACCP));
        EngineReport r = select(accp, XEON, HOTSPOT_17, ACCP, OPENSSL_30);
        assertEquals(EngineKind.ACCP, engines(r).get(Operation.GCM_SEAL));
        assertEquals(EngineKind.ACCP, engines(r).get(Operation.HMAC_SHA256));
        assertEquals(EngineKind.OPENSSL_JNI, engines(r).get(Operation.CTR));
        assertTrue(r.operation(Operation.CTR).reason().contains("accp has no ctr"), r.operation(Operation.CTR).reason());

        EngineReport jce = select(EngineSettings.defaults().withEngine(Optional.of(EngineKind.JCE)), ZEN3, ZEN3_JVM,
                ACCP, OPENSSL_30);
        jce.operations().values().forEach(c -> assertEquals(Optional.of(EngineKind.JCE), c.engine(), c.describe()));
    }

    @Test
    void requiringOpenSslOrTurningWarmUpOffChangesWhatAutoMayDo() {
        EngineSettings require = new EngineSettings(Optional.empty(), true, false, null, null);
        select(require, XEON, HOTSPOT_17, ACCP, OPENSSL_30).operations().values()
                .forEach(c -> assertEquals(Optional.of(EngineKind.OPENSSL_JNI), c.engine(), c.describe()));

        Properties p = new Properties();
        p.setProperty("sealpipe.engine.warmup", "false");
        EngineReport cold = select(EngineSettings.fromProperties(p), XEON, HOTSPOT_17, NO_ACCP, OPENSSL_30);
        assertEquals(EngineKind.JCE, engines(cold).get(Operation.CTR));
        assertEquals(Optional.empty(), cold.operation(Operation.CTR).until());
    }

    @Test
    void openSslVersionsAreReadFromTheVersionString() {
        assertTrue(EngineSelector.opensslBefore(Optional.of("OpenSSL 3.0.19 27 Jan 2026"), 3, 1));
        assertTrue(EngineSelector.opensslBefore(Optional.of("OpenSSL 1.1.1w  11 Sep 2023"), 3, 1));
        assertTrue(!EngineSelector.opensslBefore(Optional.of("OpenSSL 3.1.0 14 Mar 2023"), 3, 1));
        assertTrue(!EngineSelector.opensslBefore(Optional.empty(), 3, 1), "unknown: assume the newer");
    }
}
