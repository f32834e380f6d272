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
 */
public record JavaRuntime(int feature, String vmName, OptionalInt useAvx) {

    /**
     * Reads the running JVM. {@code UseAVX} is read (through the HotSpot diagnostic MXBean, about
     * 15 ms) only when the CPU has AVX-512 and VAES, the only case where it changes a decision.
     *
     * @param cpu this CPU's features
     * @return the facts; never throws
     */
    public static JavaRuntime detect(CpuFeatures cpu) {
        OptionalInt useAvx = OptionalInt.empty();
        if (cpu.avx512() && cpu.vaes()) {
            try {
                useAvx = OptionalInt.of(Integer.parseInt(ManagementFactory
                        .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                        .getVMOption("UseAVX").getValue()));
            } catch (RuntimeException | LinkageError e) {
                // not HotSpot, or no jdk.management module: the intrinsics are then not assumed
            }
        }
        return new JavaRuntime(Runtime.version().feature(), System.getProperty("java.vm.name", "?"), useAvx);
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
        return "Java " + feature + " (" + vmName + ")" + (useAvx.isPresent() ? ", UseAVX=" + useAvx.getAsInt() : "");
    }
}
