//===- RequireAvx512.cpp - Skip the -march=x86-64-v4 tests on older CPUs --===//
//
// Linked into every test binary built for x86-64-v4: on a CPU without AVX-512
// (or without the AVX512-BF16 / AVX512-VNNI the binary is also built for,
// ENCC_REQUIRE_AVX512BF16 / ENCC_REQUIRE_AVX512VNNI) every test is reported
// as skipped instead of dying of SIGILL, since the compiler may use those
// instructions anywhere in the binary, not only in the kernels. This file
// itself is compiled for plain x86-64 (see the CMake files).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

namespace {

class RequireAvx512 : public ::testing::Environment {
public:
  void SetUp() override {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512vl"))
      GTEST_SKIP() << "this CPU has no AVX-512 (x86-64-v4): the v4 kernel tests cannot run here";
#ifdef ENCC_REQUIRE_AVX512BF16
    if (!__builtin_cpu_supports("avx512bf16"))
      GTEST_SKIP() << "this CPU has no AVX512-BF16: this binary's tests cannot run here";
#endif
#ifdef ENCC_REQUIRE_AVX512VNNI
    if (!__builtin_cpu_supports("avx512vnni"))
      GTEST_SKIP() << "this CPU has no AVX512-VNNI: this binary's tests cannot run here";
#endif
  }
};

[[maybe_unused]] ::testing::Environment *const kRequireAvx512 =
    ::testing::AddGlobalTestEnvironment(new RequireAvx512);

} // namespace
