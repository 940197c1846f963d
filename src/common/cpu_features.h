// x86 CPU features as glibc found them at start (<sys/platform/x86.h>, glibc 2.33 on),
// each also enabled by the OS. libgcc's __builtin_cpu_supports asks the CPU again, a dozen
// cpuid leaves, and in a VM each one traps: 0.05-0.1 ms of every run on a 2-core Xeon VM.
#pragma once
#ifdef __x86_64__
#if defined(__clang__) && !defined(_Bool)
#define _Bool bool  // glibc 2.36's header says C's _Bool, which clang's C++ does not know
#include <sys/platform/x86.h>
#undef _Bool
#else
#include <sys/platform/x86.h>
#endif

namespace gpbzip2::cpu {

inline bool has_ssse3() { return CPU_FEATURE_ACTIVE(SSSE3); }
inline bool has_pclmul_sse41() {
  return CPU_FEATURE_ACTIVE(PCLMULQDQ) && CPU_FEATURE_ACTIVE(SSE4_1);
}
inline bool has_avx2_bmi2() { return CPU_FEATURE_ACTIVE(AVX2) && CPU_FEATURE_ACTIVE(BMI2); }
inline bool has_avx512_vbmi() {
  return CPU_FEATURE_ACTIVE(AVX512BW) && CPU_FEATURE_ACTIVE(AVX512VL) &&
         CPU_FEATURE_ACTIVE(AVX512_VBMI);
}

}  // namespace gpbzip2::cpu
#endif
