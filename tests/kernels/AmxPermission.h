//===- AmxPermission.h - May this test process run AMX tile instructions? -===//
//
// AMX-TILE (and the given AMX compute feature) in CPUID, the tile state
// enabled in XCR0, and Linux's tile-data permission granted
// (arch_prctl ARCH_REQ_XCOMP_PERM; without it the first tile instruction
// raises SIGILL). The runtime does the same in runtime/src/CpuFeatures.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_TESTS_AMXPERMISSION_H
#define ENC_TESTS_AMXPERMISSION_H

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kernel_test {

/// computeBit: CPUID.(7,0):EDX bit of the compute feature (22 AMX-BF16,
/// 25 AMX-INT8).
inline bool amxUsable(int computeBit) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !((d >> 24) & 1) || !((d >> computeBit) & 1))
    return false;
  unsigned lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0x60000u) != 0x60000u)
    return false;
  return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
}

} // namespace kernel_test

#endif // ENC_TESTS_AMXPERMISSION_H
