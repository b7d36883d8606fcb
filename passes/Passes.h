//===- Passes.h - Fusion/quantisation passes, the enc pipeline --*- C++ -*-===//
//
// The enc fusion passes and the int8 quantisation pass (one per file,
// declared in Passes.td) and the one pipeline that runs them. Passes are named two ways: the flag of the pass
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

class WeightStore;

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// The passes that read or create weights, writing to `weights` (null: the
/// IR changes only, as with the generated create functions).
std::unique_ptr<Pass> createFuseQKVPass(WeightStore *weights);
std::unique_ptr<Pass> createQuantizeLinearInt8Pass(const QuantizeLinearInt8PassOptions &options,
                                                   WeightStore *weights);
std::unique_ptr<Pass> createConvertLinearBf16Pass(const ConvertLinearBf16PassOptions &options,
                                                  WeightStore *weights);

/// The short names of the pipeline steps, in order: canonicalize, fuse-qkv,
/// fuse-scale-mask-softmax, fuse-attention, fuse-bias-gelu,
/// fuse-residual-layernorm. (quantize-linear-int8 and convert-linear-bf16
/// are not among them: they are opt-in.)
const std::vector<std::string> &defaultPipeline();

/// Every short name addPassByName accepts: defaultPipeline() followed by the
/// opt-in steps (decompose, quantize-linear-int8, convert-linear-bf16,
/// convert-attention-bf16, form-fusion-groups).
const std::vector<std::string> &knownPassNames();

/// True if `shortName` is one of knownPassNames().
bool isEncPassName(llvm::StringRef shortName);

/// The short name of the step a pass instance belongs to, from its argument
/// (`Pass::getArgument()`): `enc-fuse-qkv` -> `fuse-qkv`,
/// `enc-quantize-linear-int8` -> `quantize-linear-int8`; `canonicalize` and
/// `cse` -> `canonicalize` (the step is canonicalizer then CSE, so "after
/// canonicalize" means after `cse`). Empty for other passes.
llvm::StringRef encShortNameForPassArgument(llvm::StringRef passArgument);

/// Options of the steps that take some; the others ignore them.
struct EncPassOptions {
  /// The weights the module's enc.weight ops name: fuse-qkv adds the merged
  /// Q/K/V weights, quantize-linear-int8 reads the f32 ones and adds the int8
  /// ones. Null (enc-opt, lit): the passes rewrite the IR only.
  WeightStore *weights = nullptr;
  /// quantize-linear-int8 and convert-linear-bf16: glob patterns
  /// (llvm::GlobPattern: `*`, `?`, `[..]`) on weight names; matching Linears
  /// (and a matching word table) stay f32. E.g. "*attention.output*", "encoder.layer.5.*".
  std::vector<std::string> quantizeSkip;
  /// quantize-linear-int8 / convert-linear-bf16: also store the
  /// word-embedding table as int8 with per-row scales / as bf16.
  bool quantizeEmbeddings = true;
  /// quantize-linear-int8: file of static activation ranges
  /// (`<weight name> <absmax>` lines); empty = dynamic per-token scales.
  std::string quantizeCalibration;
};

struct EncPipelineOptions {
  /// Short names, in order. Defaults to defaultPipeline(); empty runs nothing
  /// (the unfused baseline). Add "quantize-linear-int8" (typically last) for
  /// int8 Linears.
  std::vector<std::string> passes = defaultPipeline();
  /// Options handed to every step.
  EncPassOptions passOptions;
};

/// Appends the step `shortName` to `pm` (any anchor: the passes run on the
/// op the manager is scheduled on and everything nested in it).
/// "canonicalize" adds MLIR's canonicalizer followed by CSE. On an unknown
/// name, fails and sets `*error` (or, when `error` is null, prints to
/// llvm::errs()) a one-line message listing the known names. Steps with
/// options get the defaults of EncPassOptions.
mlir::LogicalResult addPassByName(OpPassManager &pm, llvm::StringRef shortName,
                                  std::string *error = nullptr);

/// Same, with the options of the steps that take some (quantize-linear-int8:
/// skip patterns, embeddings, calibration file).
mlir::LogicalResult addPassByName(OpPassManager &pm, llvm::StringRef shortName,
                                  std::string *error,
                                  const EncPassOptions &options);

/// Appends the steps of `opts.passes` in order. Names must be valid (check
/// with isEncPassName or addPassByName); an unknown name is a fatal error.
void buildEncPipeline(OpPassManager &pm, const EncPipelineOptions &opts);

/// Registers the passes (`-enc-fuse-*`, `-enc-quantize-linear-int8`) and the
/// pipeline `-enc-pipeline` (options `passes=a,b,...`, default: the default
/// pipeline; `quantize-skip=p,q,...`) with MLIR's pass registry, for enc-opt
/// and `--pass-pipeline` strings.
void registerEncPasses();

} // namespace mlir::enc

#endif // ENC_PASSES_PASSES_H
