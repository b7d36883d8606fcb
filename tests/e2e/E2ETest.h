//===- E2ETest.h - Shared helpers of the end-to-end tests -----------------===//
#ifndef ENCC_TESTS_E2E_E2ETEST_H
#define ENCC_TESTS_E2E_E2ETEST_H

#include "compiler/driver/CompileDriver.h"
#include "encrt/encrt.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace encc::testing {

/// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// The first level of `defaultCpuLevels(quantize)` this CPU runs: the code
/// object the runtime would pick from a default build. compile() builds only
/// that one when the options name no levels, so a test's host compiler runs
/// once rather than two or three times; the tests of level selection and of
/// each level's code (MultiTarget, TinyModels' levels, the codegen tests)
/// name their levels.
std::vector<std::string> hostCpuLevel(const std::string &quantize);

/// Compiles `modelDir` to `output`; returns the error text ("" on success).
/// No `cpuLevels`: hostCpuLevel("none").
std::string compile(const std::string &modelDir, const std::string &output, int64_t maxSeq = 0,
                    const std::string &pooling = "", const std::vector<std::string> &cpuLevels = {});

/// Compiles with full options; returns the error text ("" on success). No
/// options.cpuLevels: hostCpuLevel(options.quantize).
std::string compile(CompileOptions options);

/// max |a - b| / max |b| over the given values.
double maxRelativeError(const std::vector<double> &actual, const std::vector<double> &expected);

/// The cosines between the valid token rows of two runs' hidden states
/// ([B, seq, H] each, sequence b's rows s < lengths[b]): their mean and min.
struct TokenCosines {
  double mean = 0, min = 1;
};
TokenCosines tokenCosines(const std::vector<float> &a, const std::vector<float> &b,
                          const std::vector<int32_t> &lengths, int64_t seq, int64_t H);

} // namespace encc::testing

#endif
