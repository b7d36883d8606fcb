//===- Passes.h - Fusion passes and the enc pipeline ------------*- C++ -*-===//
//
// The enc fusion passes (one per file, declared in Passes.td) and the one
// pipeline that runs them. Passes are named two ways: the flag of the pass
// (`enc-fuse-attention`, used by enc-opt and MLIR's pass instrumentation)
// and the short name used by the driver and the report (`fuse-attention`).
//
//===----------------------------------------------------------------------===//
#ifndef ENC_PASSES_PASSES_H
#define ENC_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::enc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// The short names of the pipeline steps, in order: canonicalize, fuse-qkv,
/// fuse-scale-mask-softmax, fuse-attention, fuse-bias-gelu,
/// fuse-residual-layernorm.
const std::vector<std::string> &defaultPipeline();

/// True if `shortName` is one of defaultPipeline().
bool isEncPassName(llvm::StringRef shortName);

/// The short name of the step a pass instance belongs to, from its argument
/// (`Pass::getArgument()`): `enc-fuse-qkv` -> `fuse-qkv`; `canonicalize` and
/// `cse` -> `canonicalize` (the step is canonicalizer then CSE, so "after
/// canonicalize" means after `cse`). Empty for other passes.
llvm::StringRef encShortNameForPassArgument(llvm::StringRef passArgument);

struct EncPipelineOptions {
  /// Short names, in order. Defaults to defaultPipeline(); empty runs nothing
  /// (the unfused baseline).
  std::vector<std::string> passes = defaultPipeline();
};

/// Appends the step `shortName` to `pm` (any anchor: the passes run on the
/// op the manager is scheduled on and everything nested in it).
/// "canonicalize" adds MLIR's canonicalizer followed by CSE. On an unknown
/// name, fails and sets `*error` (or, when `error` is null, prints to
/// llvm::errs()) a one-line message listing the known names.
mlir::LogicalResult addPassByName(OpPassManager &pm, llvm::StringRef shortName,
                                  std::string *error = nullptr);

/// Appends the steps of `opts.passes` in order. Names must be valid (check
/// with isEncPassName or addPassByName); an unknown name is a fatal error.
void buildEncPipeline(OpPassManager &pm, const EncPipelineOptions &opts);

/// Registers the five passes (`-enc-fuse-*`) and the pipeline
/// `-enc-pipeline` (option `passes=a,b,...`, default: all) with MLIR's pass
/// registry, for enc-opt and `--pass-pipeline` strings.
void registerEncPasses();

} // namespace mlir::enc

#endif // ENC_PASSES_PASSES_H
