//===- CpuFeatures.cpp - Which ISA features this CPU runs -----------------===//
#include "CpuFeatures.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace encrt::rt {

#if defined(__x86_64__) || defined(__i386__)
namespace {

/// AVX-VNNI: CPUID.(EAX=7,ECX=1):EAX[4], usable only when the OS saves AVX
/// state (the builtin's "avx2" answer includes that check).
bool hasAvxVnni() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
    return false;
  return (eax & (1u << 4)) != 0 && __builtin_cpu_supports("avx2");
}

} // namespace

bool cpuSupports(std::string_view f) {
  __builtin_cpu_init();
  // __builtin_cpu_supports needs a literal, hence the chain.
#define ENCRT_FEATURE(name)                                                    \
  if (f == name)                                                               \
    return __builtin_cpu_supports(name);
  ENCRT_FEATURE("sse2")
  ENCRT_FEATURE("sse3")
  ENCRT_FEATURE("ssse3")
  ENCRT_FEATURE("sse4.1")
  ENCRT_FEATURE("sse4.2")
  ENCRT_FEATURE("popcnt")
  ENCRT_FEATURE("avx")
  ENCRT_FEATURE("avx2")
  ENCRT_FEATURE("fma")
  ENCRT_FEATURE("bmi")
  ENCRT_FEATURE("bmi2")
  ENCRT_FEATURE("f16c")
  ENCRT_FEATURE("movbe")
  ENCRT_FEATURE("avx512f")
  ENCRT_FEATURE("avx512bw")
  ENCRT_FEATURE("avx512vl")
  ENCRT_FEATURE("avx512dq")
  ENCRT_FEATURE("avx512cd")
  ENCRT_FEATURE("avx512vnni")
  ENCRT_FEATURE("avx512bf16")
#undef ENCRT_FEATURE
  if (f == "avxvnni")
    return hasAvxVnni();
  if (f == "lzcnt" || f == "abm") {
    unsigned eax, ebx, ecx, edx;
    return __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) &&
           (ecx & (1u << 5)) != 0;
  }
  return false;
}
#else
bool cpuSupports(std::string_view) { return false; }
#endif

} // namespace encrt::rt
