package io.sealpipe.engine.openssl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.engine.CpuFeatures;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineReport;
import io.sealpipe.engine.EngineSelector;
import io.sealpipe.engine.EngineSettings;
import io.sealpipe.engine.EngineStatus;
import io.sealpipe.engine.JavaRuntime;
import io.sealpipe.engine.Platform;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/**
 * Which platforms get a libsealpipe from the jar, and what openssl-jni's reason says on the
 * others, up to {@link EngineReport#describe()}. Loads nothing: the platform is given.
 */
class NativeLibraryTest {
    private static final String SHIPPED = "shipped: linux-x86_64 and linux-aarch64, glibc 2.17 or later";

    @Test
    void theLibraryIsShippedForLinuxX86_64AndAarch64WithGlibc() {
        assertEquals(Optional.empty(), NativeLibrary.notShipped(Platform.of("Linux", "amd64")));
        assertEquals(Optional.empty(), NativeLibrary.notShipped(Platform.of("Linux", "aarch64")));
    }

    @Test
    void everyOtherPlatformIsToldWhatIsShippedAndWhatRunsInstead() {
        for (Platform p : List.of(Platform.of("Mac OS X", "aarch64"), Platform.of("Mac OS X", "x86_64"),
                Platform.of("Windows 11", "amd64"), Platform.of("Linux", "ppc64le"), Platform.of("FreeBSD", "amd64"))) {
            String why = NativeLibrary.notShipped(p).orElseThrow(() -> new AssertionError(p.id()));
            for (String part : List.of("no libsealpipe is shipped for " + p.id(), SHIPPED, "auto runs jce here",
                    "if forced with -Dsealpipe.engine=openssl-jna", "-Dsealpipe.native.library=PATH")) {
                assertTrue(why.contains(part), "expected '" + part + "' in: " + why);
            }
            assertFalse(why.contains("musl"), why);
        }
        // Off Linux, libcrypto's default names (libcrypto.so.3 ...) do not exist: say how to name it.
        assertTrue(NativeLibrary.notShipped(Platform.of("Mac OS X", "aarch64")).orElseThrow()
                .contains("-Dsealpipe.openssl.libcrypto=PATH"));
    }

    @Test
    void muslIsToldThatTheLibraryIsBuiltForGlibc() {
        String why = NativeLibrary.notShipped(Platform.of("Linux", "amd64").withMusl(true)).orElseThrow();
        assertTrue(why.startsWith("libsealpipe for linux-x86_64 is built for glibc; this JVM runs on musl libc"
                + " (Alpine): no libsealpipe is shipped for linux-x86_64-musl"), why);
        // musl on x86_64: the CPU is read (/proc/cpuinfo), so auto may take openssl-jna.
        assertTrue(why.contains(SHIPPED) && why.contains("openssl-jna can take its place")
                && why.contains("otherwise jce runs"), why);
        String arm = NativeLibrary.notShipped(Platform.of("Linux", "aarch64").withMusl(true)).orElseThrow();
        assertTrue(arm.contains("no libsealpipe is shipped for linux-aarch64-musl"), arm);
    }

    /** On musl the glibc library is never handed to System.load: it fails before, with the reason. */
    @Test
    void loadingOnAnUnshippedPlatformFailsBeforeAnyLibraryIsLoaded() {
        Platform alpine = Platform.of("Linux", "amd64").withMusl(true);
        UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class, () -> NativeLibrary.load(alpine, null));
        assertEquals(NativeLibrary.notShipped(alpine).orElseThrow(), e.getMessage());
        Platform mac = Platform.of("Mac OS X", "aarch64");
        e = assertThrows(UnsatisfiedLinkError.class, () -> NativeLibrary.load(mac, " "));
        assertEquals(NativeLibrary.notShipped(mac).orElseThrow(), e.getMessage());
    }

    @Test
    void theReasonReachesTheReport() {
        Platform mac = Platform.of("Mac OS X", "aarch64");
        UnsatisfiedLinkError failure = new UnsatisfiedLinkError(NativeLibrary.notShipped(mac).orElseThrow());
        EngineStatus jni = OpenSslJniEngine.status(failure, null, null, null);
        assertFalse(jni.available());
        assertTrue(jni.reason().contains("no libsealpipe is shipped for macos-aarch64"), jni.reason());

        CpuFeatures unknown = new CpuFeatures("aarch64", false, false, false, false, false, false, "unknown", false);
        EngineReport r = EngineSelector.select(EngineSettings.defaults(), unknown,
                new JavaRuntime(17, "OpenJDK 64-Bit Server VM", OptionalInt.empty()), mac,
                List.of(jni, EngineStatus.unavailable(EngineKind.OPENSSL_JNA, "JNA is not on the class path", null),
                        EngineStatus.available(EngineKind.JCE, "SunJCE")),
                Optional.empty(), Optional.empty());
        assertEquals(Optional.of(EngineKind.JCE), r.chosen());
        assertTrue(r.describe().contains("openssl-jni  unavailable libsealpipe native library did not load: no"
                + " libsealpipe is shipped for macos-aarch64 (" + SHIPPED + ")"), r.describe());
        assertTrue(r.notChosen().get(EngineKind.OPENSSL_JNI).contains("no libsealpipe is shipped for macos-aarch64"),
                r.notChosen().toString());
        assertTrue(r.describe().contains("auto's rule is not measured on macos-aarch64"), r.describe());
    }
}
