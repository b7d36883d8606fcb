//===- RequireAvx512.cpp - Skip the -march=x86-64-v4 tests on older CPUs --===//
//
// Linked into the test binaries built for x86-64-v4: on a CPU without
// AVX-512 every test is reported as skipped instead of dying of SIGILL.
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
  }
};

[[maybe_unused]] ::testing::Environment *const kRequireAvx512 =
    ::testing::AddGlobalTestEnvironment(new RequireAvx512);

} // namespace
