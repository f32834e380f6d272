package io.sealpipe.engine;

import java.lang.management.ManagementFactory;
import java.util.OptionalInt;

/**
 * What the running JVM brings to AES: its version, whether it is HotSpot, and HotSpot's
 * {@code UseAVX} level. With {@code UseAVX=3} on a CPU with AVX-512 and VAES, HotSpot (JDK 17 and
 * later) runs AES-CTR and AES-GCM through AVX-512 intrinsics that outrun OpenSSL 3.0, whose
 * AES-CTR has no VAES code and whose AVX-512 AES-GCM came only in 3.1.
 *
 * @param feature the Java feature release ({@code 17}, {@code 25})
 * @param vmName {@code java.vm.name}
 * @param useAvx HotSpot's {@code UseAVX} flag, empty if it could not be read (not HotSpot)
 * @param checkJni whether the JVM runs with {@code -Xcheck:jni} (HotSpot's {@code CheckJNICalls}):
 *     it then gives native code copies of arrays, which a library that writes back a whole array
 *     (accp) turns into lost output when threads write parts of one array
 */
public record JavaRuntime(int feature, String vmName, OptionalInt useAvx, boolean checkJni) {

    /**
     * The facts of a JVM without {@code -Xcheck:jni}.
     *
     * @param feature the Java feature release
     * @param vmName {@code java.vm.name}
     * @param useAvx HotSpot's {@code UseAVX} flag, or empty
     */
    public JavaRuntime(int feature, String vmName, OptionalInt useAvx) {
        this(feature, vmName, useAvx, false);
    }

    /**
     * Reads the running JVM. HotSpot's flags are read (through its diagnostic MXBean, about
     * 15 ms) only where they change a decision: {@code UseAVX} when the CPU has AVX-512 and VAES,
     * {@code CheckJNICalls} when accp is on the class path.
     *
     * @param cpu this CPU's features
     * @param accpPresent whether accp is on the class path
     * @return the facts; never throws
     */
    public static JavaRuntime detect(CpuFeatures cpu, boolean accpPresent) {
        OptionalInt useAvx = OptionalInt.empty();
        boolean checkJni = false;
        boolean avx512 = cpu.avx512() && cpu.vaes();
        if (avx512 || accpPresent) {
            try {
                com.sun.management.HotSpotDiagnosticMXBean hotspot =
                        ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
                if (avx512) {
                    useAvx = OptionalInt.of(Integer.parseInt(hotspot.getVMOption("UseAVX").getValue()));
                }
                checkJni = accpPresent && Boolean.parseBoolean(hotspot.getVMOption("CheckJNICalls").getValue());
            } catch (RuntimeException | LinkageError e) {
                // not HotSpot, or no jdk.management module: the intrinsics are then not assumed
            }
        }
        return new JavaRuntime(Runtime.version().feature(), System.getProperty("java.vm.name", "?"), useAvx, checkJni);
    }

    /**
     * Whether HotSpot runs AES-CTR with its AVX-512 VAES intrinsic here.
     *
     * @param cpu this CPU's features
     * @return true with AES-NI, VAES, AVX-512 F/DQ/BW/VL and {@code UseAVX} at least 3
     */
    public boolean avx512AesCtr(CpuFeatures cpu) {
        return cpu.aesni() && cpu.vaes() && cpu.avx512() && useAvx.orElse(0) >= 3;
    }

    /**
     * Whether HotSpot runs AES-GCM with its AVX-512 VAES and VPCLMULQDQ intrinsic here.
     *
     * @param cpu this CPU's features
     * @return true when {@link #avx512AesCtr} is and the CPU also has VPCLMULQDQ
     */
    public boolean avx512AesGcm(CpuFeatures cpu) {
        return avx512AesCtr(cpu) && cpu.pclmulqdq() && cpu.vpclmulqdq();
    }

    @Override
    public String toString() {
        return "Java " + feature + " (" + vmName + ")" + (useAvx.isPresent() ? ", UseAVX=" + useAvx.getAsInt() : "")
                + (checkJni ? ", -Xcheck:jni" : "");
    }
}
