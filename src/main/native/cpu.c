/* CPU features that decide whether OpenSSL's AES is fast: read with cpuid on x86-64. */
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
#else
jint sp_cpu_features(void) {
    return 0; /* unknown: Java falls back to /proc/cpuinfo */
}
#endif
