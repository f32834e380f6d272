package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code /proc/cpuinfo} fallback with the architecture given, so that it does not depend on
 * the machine: under qemu-user an aarch64 JVM reads the x86 host's cpuinfo.
 */
class CpuFeaturesTest {
    /** An Intel Xeon with AVX-512, as x86-64 Linux prints it (flags shortened). */
    static final String XEON_CPUINFO = """
            processor	: 0
            vendor_id	: GenuineIntel
            model name	: Intel(R) Xeon(R) Platinum 8488C
            flags		: fpu vme sse2 ssse3 pclmulqdq sse4_2 aes avx avx2 avx512f avx512dq avx512bw avx512vl vaes vpclmulqdq
            bugs		: spectre_v1

            processor	: 1
            flags		: fpu vme sse2 ssse3 pclmulqdq sse4_2 aes avx avx2 avx512f avx512dq avx512bw avx512vl vaes vpclmulqdq
            """;

    /** An AWS Graviton 3 (Neoverse V1), as aarch64 Linux prints it. */
    static final String GRAVITON_CPUINFO = """
            processor	: 0
            BogoMIPS	: 2100.00
            Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng
            CPU implementer	: 0x41
            CPU architecture: 8
            CPU part	: 0xd40
            """;

    /** A Raspberry Pi 4 (Cortex-A72 without the Crypto Extensions). */
    static final String PI4_CPUINFO = """
            processor	: 0
            BogoMIPS	: 108.00
            Features	: fp asimd evtstrm crc32 cpuid
            CPU implementer	: 0x41
            """;

    @TempDir
    Path dir;

    private CpuFeatures read(String text, String arch) throws IOException {
        Path file = dir.resolve("cpuinfo-" + arch);
        Files.writeString(file, text);
        return CpuFeatures.fromProcCpuinfo(file, arch);
    }

    @Test
    void theFeaturesLineGivesArmv8AesAndPmullOnAarch64() throws IOException {
        CpuFeatures graviton = read(GRAVITON_CPUINFO, "aarch64");
        assertEquals("aarch64", graviton.arch());
        assertTrue(graviton.aesni(), graviton.toString());
        assertTrue(graviton.pclmulqdq(), graviton.toString());
        assertFalse(graviton.avx2() || graviton.vaes() || graviton.vpclmulqdq() || graviton.avx512(), graviton.toString());
        assertEquals(dir.resolve("cpuinfo-aarch64").toString(), graviton.source());
        assertEquals("AES yes, PMULL yes (ARMv8 Crypto Extensions, from " + graviton.source() + ")", graviton.toString());

        CpuFeatures pi = read(PI4_CPUINFO, "aarch64");
        assertFalse(pi.aesni() || pi.pclmulqdq(), pi.toString());
        assertEquals("AES no, PMULL no (ARMv8 Crypto Extensions, from " + pi.source() + ")", pi.toString());
    }

    /** qemu-user gives an emulated aarch64 JVM the x86 host's /proc/cpuinfo: none of it describes this CPU. */
    @Test
    void x86FlagsAreIgnoredOnAarch64() throws IOException {
        CpuFeatures emulated = read(XEON_CPUINFO, "aarch64");
        assertFalse(emulated.aesni() || emulated.pclmulqdq() || emulated.avx2() || emulated.vaes()
                || emulated.vpclmulqdq() || emulated.avx512(), emulated.toString());
        assertEquals("unknown", emulated.source(), "no line of this architecture: nothing is known");
        for (String x86 : List.of("AES-NI", "AVX", "VAES", "PCLMULQDQ")) {
            assertFalse(emulated.toString().contains(x86), emulated.toString());
        }
    }

    @Test
    void armFeaturesAreIgnoredOnX86AndX86FlagsReadAsBefore() throws IOException {
        CpuFeatures arm = read(GRAVITON_CPUINFO, "x86_64");
        assertFalse(arm.aesni() || arm.pclmulqdq(), arm.toString());
        assertEquals("unknown", arm.source());

        CpuFeatures xeon = read(XEON_CPUINFO, "x86_64");
        assertTrue(xeon.aesni() && xeon.pclmulqdq() && xeon.avx2() && xeon.vaes() && xeon.vpclmulqdq() && xeon.avx512(),
                xeon.toString());
        assertEquals("AES-NI yes, PCLMULQDQ yes, AVX2 yes, VAES yes, VPCLMULQDQ yes, AVX-512 yes (from "
                + xeon.source() + ")", xeon.toString());
    }

    @Test
    void otherArchitecturesTrustNoLine() throws IOException {
        CpuFeatures ppc = read(XEON_CPUINFO + GRAVITON_CPUINFO, "ppc64le");
        assertFalse(ppc.aesni() || ppc.pclmulqdq() || ppc.avx512(), ppc.toString());
        assertEquals("unknown", ppc.source());
        assertFalse(ppc.toString().contains("AES-NI"), ppc.toString());
        assertTrue(ppc.toString().contains("ppc64le"), ppc.toString());
    }

    @Test
    void maskingNamesTheArchitecturesAes() throws IOException {
        CpuFeatures masked = read(GRAVITON_CPUINFO, "aarch64").withoutAesni();
        assertFalse(masked.aesni());
        assertTrue(masked.toString().startsWith("AES no (masked by sealpipe.cpu.aesni=false), PMULL yes"),
                masked.toString());
        assertEquals("ARMv8 AES", masked.aesName());
        assertEquals("AES-NI", read(XEON_CPUINFO, "x86_64").aesName());
    }
}
