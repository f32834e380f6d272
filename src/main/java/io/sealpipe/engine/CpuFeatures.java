package io.sealpipe.engine;

import io.sealpipe.engine.openssl.OpenSslJniEngine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The CPU features that make AES fast, named for the CPU's architecture. Read in libsealpipe.so
 * with {@code cpuid} on x86 and {@code getauxval(AT_HWCAP)} on aarch64; where the library is not
 * loaded, from the line of {@code /proc/cpuinfo} that belongs to this architecture ({@code flags}
 * on x86, {@code Features} on aarch64) and from no other: under qemu-user an emulated aarch64 JVM
 * reads the x86 host's cpuinfo, which says nothing about the CPU it runs on.
 *
 * <p>The component names are those of x86 and of {@code sealpipe info --json}, a contract: on
 * aarch64 {@code aesni} means hardware AES (the AES instructions of the ARMv8 Cryptography
 * Extensions) and {@code pclmulqdq} the carry-less multiply GCM uses (PMULL); the x86-only
 * features are false there. {@link #toString()} uses each architecture's own names.
 *
 * @param arch the {@link Platform#arch()} the features were read for: {@code x86_64},
 *     {@code aarch64}, or another (nothing is read there: every feature is false)
 * @param aesni hardware AES: AES-NI on x86, ARMv8 AES on aarch64 (after
 *     {@code sealpipe.cpu.aesni=false}, if set)
 * @param pclmulqdq carry-less multiply, used by GCM: PCLMULQDQ on x86, PMULL on aarch64
 * @param avx2 AVX2 (x86 only)
 * @param vaes vector AES (x86 only)
 * @param vpclmulqdq vector carry-less multiply (x86 only)
 * @param avx512 AVX-512 F, DQ, BW and VL together, what HotSpot's AVX-512 AES intrinsics need (x86 only)
 * @param source {@code cpuid}, {@code AT_HWCAP}, the cpuinfo file read, or {@code unknown}
 * @param aesniSimulatedOff whether hardware AES was masked by {@code sealpipe.cpu.aesni=false}
 */
public record CpuFeatures(String arch, boolean aesni, boolean pclmulqdq, boolean avx2, boolean vaes,
        boolean vpclmulqdq, boolean avx512, String source, boolean aesniSimulatedOff) {

    /** {@link #source()} when nothing could be read. */
    public static final String UNKNOWN = "unknown";

    /**
     * Detects the features of this CPU, applying the AES simulation of the settings. Never
     * throws: if neither the native library nor {@code /proc/cpuinfo} tells, every feature is
     * false and the source is {@code unknown}.
     *
     * @param settings whose {@link EngineSettings#aesniDisabled()} masks hardware AES
     * @return the features found
     */
    public static CpuFeatures detect(EngineSettings settings) {
        Platform platform = Platform.current();
        CpuFeatures real = fromNative(platform.arch()).orElseGet(() -> platform.os().equals("linux")
                ? fromProcCpuinfo(Path.of("/proc/cpuinfo"), platform.arch()) : unknown(platform.arch()));
        return settings.aesniDisabled() ? real.withoutAesni() : real;
    }

    private static Optional<CpuFeatures> fromNative(String arch) {
        OptionalInt bits = OpenSslJniEngine.cpuidFeatures();
        if (bits.isEmpty()) {
            return Optional.empty();
        }
        int b = bits.getAsInt();
        if (arch.equals(Platform.AARCH64)) { // AT_HWCAP: AES and PMULL in the AES-NI and PCLMULQDQ bits
            return Optional.of(new CpuFeatures(arch, (b & 1) != 0, (b & 2) != 0, false, false, false, false,
                    "AT_HWCAP", false));
        }
        return Optional.of(new CpuFeatures(arch, (b & 1) != 0, (b & 2) != 0, (b & 4) != 0, (b & 8) != 0,
                (b & 16) != 0, (b & 32) != 0, "cpuid", false));
    }

    /**
     * Reads the first line of a cpuinfo file that belongs to the architecture: {@code flags} on
     * x86, {@code Features} on aarch64; none on other architectures. Without such a line (or the
     * file) every feature is false and the source is {@code unknown}.
     *
     * @param cpuinfo the file, {@code /proc/cpuinfo}
     * @param arch the architecture the JVM runs on ({@link Platform#arch()}), not the file's
     * @return the features the line names
     */
    static CpuFeatures fromProcCpuinfo(Path cpuinfo, String arch) {
        String key = Platform.isX86(arch) ? "flags" : arch.equals(Platform.AARCH64) ? "Features" : null;
        if (key == null) {
            return unknown(arch);
        }
        Optional<Set<String>> line;
        try (Stream<String> lines = Files.lines(cpuinfo)) {
            line = lines.filter(l -> l.indexOf(':') > 0 && l.substring(0, l.indexOf(':')).strip().equals(key))
                    .findFirst()
                    .map(l -> Arrays.stream(l.substring(l.indexOf(':') + 1).strip().split("\\s+"))
                            .collect(Collectors.toSet()));
        } catch (IOException | RuntimeException e) {
            return unknown(arch);
        }
        if (line.isEmpty()) {
            return unknown(arch);
        }
        Set<String> f = line.get();
        if (key.equals("Features")) {
            return new CpuFeatures(arch, f.contains("aes"), f.contains("pmull"), false, false, false, false,
                    cpuinfo.toString(), false);
        }
        return new CpuFeatures(arch, f.contains("aes"), f.contains("pclmulqdq"), f.contains("avx2"), f.contains("vaes"),
                f.contains("vpclmulqdq"), f.containsAll(List.of("avx512f", "avx512dq", "avx512bw", "avx512vl")),
                cpuinfo.toString(), false);
    }

    private static CpuFeatures unknown(String arch) {
        return new CpuFeatures(arch, false, false, false, false, false, false, UNKNOWN, false);
    }

    CpuFeatures withoutAesni() {
        return new CpuFeatures(arch, false, pclmulqdq, avx2, vaes, vpclmulqdq, avx512, source, true);
    }

    /**
     * The name of this architecture's hardware AES, for messages.
     *
     * @return {@code AES-NI} on x86, {@code ARMv8 AES} on aarch64, {@code hardware AES} elsewhere
     */
    public String aesName() {
        return Platform.isX86(arch) ? "AES-NI" : arch.equals(Platform.AARCH64) ? "ARMv8 AES" : "hardware AES";
    }

    /**
     * Whether the features could be read at all.
     *
     * @return false when {@link #source()} is {@code unknown}: every feature is then false because
     *     nothing is known, not because the CPU lacks it
     */
    public boolean known() {
        return !source.equals(UNKNOWN);
    }

    /**
     * The features in this architecture's names, or that they are unknown.
     *
     * @return e.g. {@code AES-NI yes, PCLMULQDQ yes, AVX2 yes, VAES no, VPCLMULQDQ no, AVX-512 no (from cpuid)},
     *     {@code AES yes, PMULL yes (ARMv8 Crypto Extensions, from AT_HWCAP)} or {@code ARMv8 AES
     *     unknown: CPU features could not be read here (auto treats ARMv8 AES as absent)}
     */
    @Override
    public String toString() {
        String masked = aesniSimulatedOff ? " (masked by " + EngineSettings.CPU_AESNI + "=false)" : "";
        boolean readHere = Platform.isX86(arch) || arch.equals(Platform.AARCH64);
        if (!known()) {
            return aesName() + " unknown" + masked + ": " + (readHere ? "CPU features could not be read here"
                    : "sealpipe reads CPU features on x86_64 and aarch64 only, not on " + arch)
                    + " (auto treats " + aesName() + " as absent)";
        }
        if (Platform.isX86(arch)) {
            return "AES-NI " + yesNo(aesni) + masked + ", PCLMULQDQ " + yesNo(pclmulqdq) + ", AVX2 " + yesNo(avx2)
                    + ", VAES " + yesNo(vaes) + ", VPCLMULQDQ " + yesNo(vpclmulqdq) + ", AVX-512 " + yesNo(avx512)
                    + " (from " + source + ")";
        }
        if (arch.equals(Platform.AARCH64)) {
            return "AES " + yesNo(aesni) + masked + ", PMULL " + yesNo(pclmulqdq) + " (ARMv8 Crypto Extensions, from "
                    + source + ")";
        }
        return "hardware AES " + yesNo(aesni) + masked + ", carry-less multiply " + yesNo(pclmulqdq) + " (" + arch
                + ", from " + source + ")";
    }

    private static String yesNo(boolean b) {
        return b ? "yes" : "no";
    }
}
