package io.sealpipe.engine;

import io.sealpipe.engine.openssl.OpenSslJniEngine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The CPU features that make AES fast, read with {@code cpuid} in libsealpipe.so, or from
 * {@code /proc/cpuinfo} when the native library is not available.
 *
 * @param aesni AES-NI (after {@code sealpipe.cpu.aesni=false}, if set)
 * @param pclmulqdq carry-less multiply, used by GCM
 * @param avx2 AVX2
 * @param vaes vector AES
 * @param vpclmulqdq vector carry-less multiply
 * @param avx512 AVX-512 F, DQ, BW and VL together (what HotSpot's AVX-512 AES intrinsics need)
 * @param source {@code cpuid}, {@code /proc/cpuinfo} or {@code unknown}
 * @param aesniSimulatedOff whether AES-NI was masked by {@code sealpipe.cpu.aesni=false}
 */
public record CpuFeatures(boolean aesni, boolean pclmulqdq, boolean avx2, boolean vaes, boolean vpclmulqdq,
        boolean avx512, String source, boolean aesniSimulatedOff) {

    /**
     * Detects the features of this CPU, applying the AES-NI simulation of the settings. Never
     * throws: if neither {@code cpuid} nor {@code /proc/cpuinfo} can be read, every feature is
     * false and the source is {@code unknown}.
     *
     * @param settings whose {@link EngineSettings#aesniDisabled()} masks AES-NI
     * @return the features found
     */
    public static CpuFeatures detect(EngineSettings settings) {
        CpuFeatures real = fromCpuid().orElse(null);
        if (real == null) {
            real = fromProcCpuinfo(Path.of("/proc/cpuinfo"));
        }
        return settings.aesniDisabled() ? real.withoutAesni() : real;
    }

    private static java.util.Optional<CpuFeatures> fromCpuid() {
        OptionalInt bits = OpenSslJniEngine.cpuidFeatures();
        if (bits.isEmpty()) {
            return java.util.Optional.empty();
        }
        int b = bits.getAsInt();
        return java.util.Optional.of(new CpuFeatures((b & 1) != 0, (b & 2) != 0, (b & 4) != 0, (b & 8) != 0,
                (b & 16) != 0, (b & 32) != 0, "cpuid", false));
    }

    /** Reads the first "flags" line of a cpuinfo file; all false if it cannot be read. */
    static CpuFeatures fromProcCpuinfo(Path cpuinfo) {
        try (Stream<String> lines = Files.lines(cpuinfo)) {
            Set<String> flags = lines.filter(l -> l.startsWith("flags") || l.startsWith("Features"))
                    .findFirst()
                    .map(l -> new HashSet<>(Arrays.asList(l.substring(l.indexOf(':') + 1).trim().split("\\s+"))))
                    .orElseGet(HashSet::new);
            return new CpuFeatures(flags.contains("aes"), flags.contains("pclmulqdq") || flags.contains("pmull"),
                    flags.contains("avx2"), flags.contains("vaes"), flags.contains("vpclmulqdq"),
                    flags.containsAll(List.of("avx512f", "avx512dq", "avx512bw", "avx512vl")), cpuinfo.toString(), false);
        } catch (IOException | RuntimeException e) {
            return new CpuFeatures(false, false, false, false, false, false, "unknown", false);
        }
    }

    CpuFeatures withoutAesni() {
        return new CpuFeatures(false, pclmulqdq, avx2, vaes, vpclmulqdq, avx512, source, true);
    }

    @Override
    public String toString() {
        return "AES-NI " + yesNo(aesni) + (aesniSimulatedOff ? " (masked by " + EngineSettings.CPU_AESNI + "=false)" : "")
                + ", PCLMULQDQ " + yesNo(pclmulqdq) + ", AVX2 " + yesNo(avx2) + ", VAES " + yesNo(vaes)
                + ", VPCLMULQDQ " + yesNo(vpclmulqdq) + ", AVX-512 " + yesNo(avx512) + " (from " + source + ")";
    }

    private static String yesNo(boolean b) {
        return b ? "yes" : "no";
    }
}
