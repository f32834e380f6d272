package io.sealpipe.engine.openssl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineReport;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.Operation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * That the aarch64 run (profile {@code aarch64}) really ran on aarch64, with the jar's
 * linux-aarch64 libsealpipe: the other tests of that run would pass on x86_64 too. Runs only
 * there ({@code sealpipe.test.rerun=aarch64}).
 */
@EnabledIfSystemProperty(named = "sealpipe.test.rerun", matches = "aarch64")
class Aarch64RunTest {
    @Test
    void theJvmIsAarch64AndOpenSslJniRunsOnTheShippedLibrary() {
        assertEquals("aarch64", System.getProperty("os.arch"));
        EngineReport report = Engines.report();
        assertEquals("linux-aarch64", report.platform().id());
        assertTrue(report.status(EngineKind.OPENSSL_JNI).available(), report.status(EngineKind.OPENSSL_JNI).reason());
        assertEquals(null, System.getProperty(NativeLibrary.LIBRARY_PROPERTY), "the jar's library, not one named");
        assertEquals("aarch64", report.cpu().arch());
        assertEquals("AT_HWCAP", report.cpu().source(), "read by libsealpipe's getauxval, not /proc/cpuinfo");
        assertTrue(report.cpu().aesni(), "qemu's aarch64 CPU has the ARMv8 AES instructions: " + report.cpu());
        assertEquals(EngineKind.OPENSSL_JNI, report.chosen().orElseThrow(), report.decision());
        for (Operation op : Operation.values()) {
            assertEquals(EngineKind.OPENSSL_JNI, report.operation(op).engine().orElseThrow(), op + ": "
                    + report.operation(op).reason());
        }
        for (EngineKind kind : new EngineKind[] {EngineKind.OPENSSL_JNA, EngineKind.JCE}) {
            assertTrue(report.status(kind).available(), kind.id() + ": " + report.status(kind).reason());
        }
        assertTrue(report.opensslPath().orElseThrow().contains("/aarch64-linux-gnu/"),
                "the arm64 libcrypto: " + report.opensslPath());
        assertFalse(report.autoMeasured(), "auto's rule is not measured on aarch64");
        assertTrue(report.autoNote().orElseThrow().contains("not measured on linux-aarch64"), report.autoNote().get());
    }
}
