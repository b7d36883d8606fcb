//===- E2ETest.cpp - Shared helpers of the end-to-end tests ---------------===//

#include "tests/e2e/E2ETest.h"

#include "compiler/codegen/cpu/CpuCodegen.h"
#include "runtime/src/CpuFeatures.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace encc::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "encc-e2e-XXXXXX").string();
  path_ = mkdtemp(tmpl.data()) ? tmpl : std::string();
  if (path_.empty())
    ADD_FAILURE() << "cannot create a temporary directory";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty() && !std::getenv("ENCC_KEEP_TEMPS"))
    std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> hostCpuLevel(const std::string &quantize) {
  const std::vector<std::string> levels = defaultCpuLevels(quantize);
  for (const std::string &name : levels) {
    llvm::Expected<CpuLevel> level = parseCpuLevel(name);
    if (!level) {
      ADD_FAILURE() << llvm::toString(level.takeError());
      continue;
    }
    const std::vector<std::string> features = cpuLevelFeatures(*level);
    if (std::all_of(features.begin(), features.end(), [](const std::string &f) { return encrt::rt::cpuSupports(f); }))
      return {name};
  }
  return levels; // none runs here: the runtime's load error says so
}

std::string compile(const std::string &modelDir, const std::string &output, int64_t maxSeq,
                    const std::string &pooling, const std::vector<std::string> &cpuLevels) {
  CompileOptions opt;
  opt.modelDir = modelDir;
  opt.output = output;
  opt.maxSeq = maxSeq;
  if (!pooling.empty())
    opt.pooling = parsePooling(pooling).value();
  if (!cpuLevels.empty())
    opt.cpuLevels = cpuLevels;
  return compile(opt);
}

std::string compile(CompileOptions opt) {
  if (opt.cpuLevels.empty())
    opt.cpuLevels = hostCpuLevel(opt.quantize);
  std::string ignored;
  llvm::raw_string_ostream out(ignored);
  if (llvm::Error err = compileModel(opt, out, [](const std::string &) {}))
    return llvm::toString(std::move(err));
  return "";
}

double maxRelativeError(const std::vector<double> &actual, const std::vector<double> &expected) {
  EXPECT_EQ(actual.size(), expected.size());
  double maxDiff = 0, maxRef = 0;
  for (size_t i = 0; i < std::min(actual.size(), expected.size()); ++i) {
    if (!std::isfinite(actual[i]))
      return INFINITY;
    maxDiff = std::max(maxDiff, std::fabs(actual[i] - expected[i]));
    maxRef = std::max(maxRef, std::fabs(expected[i]));
  }
  return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}

TokenCosines tokenCosines(const std::vector<float> &a, const std::vector<float> &b,
                          const std::vector<int32_t> &lengths, int64_t seq, int64_t H) {
  TokenCosines c;
  double sum = 0;
  int64_t n = 0;
  for (size_t i = 0; i < lengths.size(); ++i)
    for (int32_t s = 0; s < lengths[i]; ++s, ++n) {
      const size_t at = (i * seq + s) * H;
      double ab = 0, aa = 0, bb = 0;
      for (int64_t d = 0; d < H; ++d)
        ab += double(a[at + d]) * b[at + d], aa += double(a[at + d]) * a[at + d], bb += double(b[at + d]) * b[at + d];
      const double cs = ab / std::sqrt(aa * bb);
      c.min = std::min(c.min, cs);
      sum += cs;
    }
  c.mean = n ? sum / n : 1;
  return c;
}

} // namespace encc::testing
