/*
 * CPU features that decide whether OpenSSL's AES is fast: read with cpuid on x86, and from the
 * kernel's AT_HWCAP on aarch64 (getauxval, glibc 2.16 and later; our baseline is 2.17). On
 * aarch64, AES and PMULL of the ARMv8 Cryptography Extensions are reported in the AES-NI and
 * PCLMULQDQ bits (sealpipe.h). Reading AT_HWCAP, not /proc/cpuinfo, also gives the right answer
 * under qemu-user, where /proc/cpuinfo is the host's.
 */
#include "sealpipe.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

jint sp_cpu_features(void) {
    unsigned int eax, ebx, ecx, edx;
    jint features = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        return 0;
    }
    features |= SP_CPU_KNOWN;
    if (ecx & (1u << 25)) features |= SP_CPU_AESNI;
    if (ecx & (1u << 1)) features |= SP_CPU_PCLMULQDQ;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
        if (ebx & (1u << 5)) features |= SP_CPU_AVX2;
        if (ecx & (1u << 9)) features |= SP_CPU_VAES;
        if (ecx & (1u << 10)) features |= SP_CPU_VPCLMULQDQ;
        const unsigned int avx512 = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31); /* F, DQ, BW, VL */
        if ((ebx & avx512) == avx512) features |= SP_CPU_AVX512;
    }
    return features;
}
#elif defined(__aarch64__)
#include <sys/auxv.h>

/* The kernel's bits (arch/arm64/include/uapi/asm/hwcap.h), in case the libc headers lack them. */
#ifndef AT_HWCAP
#define AT_HWCAP 16
#endif
#ifndef HWCAP_AES
#define HWCAP_AES (1UL << 3)
#endif
#ifndef HWCAP_PMULL
#define HWCAP_PMULL (1UL << 4)
#endif

jint sp_cpu_features(void) {
    const unsigned long hwcap = getauxval(AT_HWCAP);
    jint features = SP_CPU_KNOWN; /* every aarch64 Linux kernel passes AT_HWCAP */
    if (hwcap & HWCAP_AES) features |= SP_CPU_AESNI;
    if (hwcap & HWCAP_PMULL) features |= SP_CPU_PCLMULQDQ;
    return features;
}
#else
jint sp_cpu_features(void) {
    return 0; /* unknown: Java falls back to /proc/cpuinfo */
}
#endif
