//===- CpuFeatures.cpp - Which ISA features this CPU runs -----------------===//
//
// Straight from CPUID and XCR0 (no __builtin_cpu_supports: clang knows fewer
// of its names than GCC, e.g. "f16c"): a feature counts only when the CPU has
// it and the OS saves the registers it uses (YMM state for AVX-encoded
// features, opmask + ZMM state for AVX-512), as GCC's builtin does. AMX
// also needs the tile state in XCR0 and, on Linux, the process's permission
// to use the tile data, requested here once (arch_prctl ARCH_REQ_XCOMP_PERM):
// without it the first AMX instruction would raise SIGILL, so a refused
// request makes AMX unsupported and the runtime picks another code object.
//
//===----------------------------------------------------------------------===//
#include "CpuFeatures.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdint>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace encrt::rt {

#if defined(__x86_64__) || defined(__i386__)
namespace {

struct CpuidBits {
  uint32_t leaf1Ecx = 0, leaf1Edx = 0;
  uint32_t leaf7Ebx = 0, leaf7Ecx = 0, leaf7Edx = 0, leaf7s1Eax = 0;
  uint32_t ext1Ecx = 0;
  bool ymmState = false, zmmState = false, tileState = false;

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
      leaf7Edx = edx;
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
      tileState = (lo & 0x60000u) == 0x60000u; // XTILECFG + XTILEDATA
    }
  }
};

const CpuidBits &cpuid() {
  static const CpuidBits bits;
  return bits;
}

/// The tile state enabled and (Linux) this process allowed to use it.
bool amxPermitted() {
  static const bool permitted = [] {
    if (!cpuid().tileState || !((cpuid().leaf7Edx >> 24) & 1u))
      return false;
#if defined(__linux__) && defined(SYS_arch_prctl)
    constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return permitted;
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
  // AMX: tile state and permission.
  if (f == "amx-tile") return amxPermitted();
  if (f == "amx-bf16") return amxPermitted() && bit(c.leaf7Edx, 22);
  if (f == "amx-int8") return amxPermitted() && bit(c.leaf7Edx, 25);
  return false;
}
#else
bool cpuSupports(std::string_view) { return false; }
#endif

} // namespace encrt::rt
