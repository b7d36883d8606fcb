//===- CpuFeatures.cpp - Which ISA features this CPU runs -----------------===//
//
// Straight from CPUID and XCR0 (no __builtin_cpu_supports: clang knows fewer
// of its names than GCC, e.g. "f16c"): a feature counts only when the CPU has
// it and the OS saves the registers it uses (YMM state for AVX-encoded
// features, opmask + ZMM state for AVX-512), as GCC's builtin does.
//
//===----------------------------------------------------------------------===//
#include "CpuFeatures.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdint>

namespace encrt::rt {

#if defined(__x86_64__) || defined(__i386__)
namespace {

struct CpuidBits {
  uint32_t leaf1Ecx = 0, leaf1Edx = 0;
  uint32_t leaf7Ebx = 0, leaf7Ecx = 0, leaf7s1Eax = 0;
  uint32_t ext1Ecx = 0;
  bool ymmState = false, zmmState = false;

  CpuidBits() {
    unsigned eax, ebx, ecx, edx;
    const unsigned maxLeaf = __get_cpuid_max(0, nullptr);
    if (maxLeaf >= 1 && __get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
      leaf1Ecx = ecx;
      leaf1Edx = edx;
    }
    if (maxLeaf >= 7 && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
      leaf7Ebx = ebx;
      leaf7Ecx = ecx;
      if (eax >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
        leaf7s1Eax = eax;
    }
    if (__get_cpuid_max(0x80000000u, nullptr) >= 0x80000001u &&
        __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx))
      ext1Ecx = ecx;
    if (leaf1Ecx & (1u << 27)) { // OSXSAVE: XGETBV is usable
      uint32_t lo, hi;
      __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      ymmState = (lo & 0x6u) == 0x6u;    // SSE + AVX state
      zmmState = (lo & 0xE6u) == 0xE6u;  // + opmask, ZMM_Hi256, Hi16_ZMM
    }
  }
};

const CpuidBits &cpuid() {
  static const CpuidBits bits;
  return bits;
}

} // namespace

bool cpuSupports(std::string_view f) {
  const CpuidBits &c = cpuid();
  auto bit = [](uint32_t reg, int b) { return (reg >> b) & 1u; };
  // SSE family and scalar extensions: no extra OS state.
  if (f == "sse2") return bit(c.leaf1Edx, 26);
  if (f == "sse3") return bit(c.leaf1Ecx, 0);
  if (f == "ssse3") return bit(c.leaf1Ecx, 9);
  if (f == "sse4.1") return bit(c.leaf1Ecx, 19);
  if (f == "sse4.2") return bit(c.leaf1Ecx, 20);
  if (f == "popcnt") return bit(c.leaf1Ecx, 23);
  if (f == "movbe") return bit(c.leaf1Ecx, 22);
  if (f == "bmi") return bit(c.leaf7Ebx, 3);
  if (f == "bmi2") return bit(c.leaf7Ebx, 8);
  if (f == "lzcnt" || f == "abm") return bit(c.ext1Ecx, 5);
  // VEX-encoded: YMM state.
  if (f == "avx") return c.ymmState && bit(c.leaf1Ecx, 28);
  if (f == "fma") return c.ymmState && bit(c.leaf1Ecx, 12);
  if (f == "f16c") return c.ymmState && bit(c.leaf1Ecx, 29);
  if (f == "avx2") return c.ymmState && bit(c.leaf7Ebx, 5);
  if (f == "avxvnni") return c.ymmState && bit(c.leaf7s1Eax, 4);
  // EVEX-encoded: ZMM and opmask state.
  if (f == "avx512f") return c.zmmState && bit(c.leaf7Ebx, 16);
  if (f == "avx512dq") return c.zmmState && bit(c.leaf7Ebx, 17);
  if (f == "avx512cd") return c.zmmState && bit(c.leaf7Ebx, 28);
  if (f == "avx512bw") return c.zmmState && bit(c.leaf7Ebx, 30);
  if (f == "avx512vl") return c.zmmState && bit(c.leaf7Ebx, 31);
  if (f == "avx512vnni") return c.zmmState && bit(c.leaf7Ecx, 11);
  if (f == "avx512bf16") return c.zmmState && bit(c.leaf7s1Eax, 5);
  return false;
}
#else
bool cpuSupports(std::string_view) { return false; }
#endif

} // namespace encrt::rt
