//===- CompileDriver.h - Model folder -> .encm ----------------------------===//
#ifndef ENCC_COMPILER_COMPILEDRIVER_H
#define ENCC_COMPILER_COMPILEDRIVER_H

#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace encc {

struct CompileOptions {
  std::string modelDir;
  std::string output = "model.encm";
  std::string emit = "artifact";              ///< "artifact" | "mlir" | "cpp"
  std::vector<std::string> cpuLevels = {"x86-64-v3"}; ///< best first
  int64_t maxSeq = 0;                         ///< 0: from the model
  std::string pooling;                        ///< "" = from the model folder
  int normalize = -1;                         ///< -1 = from the model folder
  std::string saveTemps;                      ///< keep generated sources here
};

/// Progress lines ("importing ...", with timings) go to `progress`.
/// --emit=mlir / --emit=cpp print to `out` instead of writing the artifact.
llvm::Error compileModel(const CompileOptions &options, llvm::raw_ostream &out,
                         const std::function<void(const std::string &)> &progress);

} // namespace encc

#endif // ENCC_COMPILER_COMPILEDRIVER_H
