//===- CompileDriver.h - Model folder -> .encm ----------------------------===//
//
// The stages of `encc compile`, usable one by one (encc report recompiles the
// same imported model once per pipeline prefix):
//   importHFModel -> runEncPipeline -> generateCpuCode -> buildCodeObjects
//   -> writeArtifact
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_COMPILEDRIVER_H
#define ENCC_COMPILER_COMPILEDRIVER_H

#include "compiler/Plan.h"
#include "frontends/hf/HFImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
}

namespace encc {

using ProgressFn = std::function<void(const std::string &)>;

/// How the pass pipeline runs and what it shows.
struct PipelineOptions {
  std::vector<std::string> passes;      ///< short names, in order
  std::vector<std::string> printIrAfter; ///< print the IR after these passes
  bool printIrAfterAll = false;
  bool timing = false;     ///< a per-pass time table on stderr
  bool statistics = false; ///< pass statistics on stderr
  /// quantize-linear-int8: weight-name glob patterns kept f32, and an
  /// optional file of static activation ranges (`<weight name> <absmax>`).
  std::vector<std::string> quantizeSkip;
  std::string calibration;
};

/// The pass `--pipeline=none` and encc report's baseline run: the frontend's
/// fused attention spelled as the unfused op sequence.
constexpr const char *kDecomposePass = "decompose";
/// The pass that `--quantize=int8` appends to the pipeline.
constexpr const char *kQuantizeInt8Pass = "quantize-linear-int8";
/// The pass that `--quantize=bf16` appends to the pipeline.
constexpr const char *kConvertBf16Pass = "convert-linear-bf16";
/// The attention pass `--quantize=bf16` appends after kConvertBf16Pass.
constexpr const char *kAttentionBf16Pass = "convert-attention-bf16";
/// The attention pass `--quantize=int8` appends after kQuantizeInt8Pass:
/// bf16 attention on CPUs with AMX tiles only.
constexpr const char *kAttentionBf16AmxPass = "convert-attention-bf16-amx";
/// The pass every build runs last (unless disabled): the chains one kernel
/// computes become enc.fusion groups for codegen.
constexpr const char *kFormFusionGroupsPass = "form-fusion-groups";

/// The passes a precision appends to the pipeline, in order: int8:
/// kQuantizeInt8Pass, kAttentionBf16AmxPass (bf16 attention only where AMX
/// tiles run it, 1.05-2.4x faster than f32 there; not kAttentionBf16Pass:
/// int8's other code objects have VNNI but not always AVX512-BF16, where bf16
/// p·v is emulated and slower than fp32); bf16: kConvertBf16Pass,
/// kAttentionBf16Pass. Empty for other values.
std::vector<std::string> precisionPasses(const std::string &quantize);

struct CompileOptions {
  std::string modelDir;
  std::string output = "model.encm";
  std::string emit = "artifact";                      ///< "artifact" | "mlir" | "cpp" | "cu"
  std::vector<std::string> targets = {"cpu"};         ///< "cpu" and/or "cuda" (--target)
  std::vector<std::string> cudaArchs;                 ///< empty: defaultCudaArchs()
  std::string cudaDType = "f16";                      ///< "f16" | "bf16" (--cuda-dtype)
  std::string cudaAttention = "auto";                 ///< --cuda-attention (parseCudaAttentionKernel)
  std::vector<std::string> cpuLevels;                 ///< best first; empty: defaultCpuLevels(quantize)
  int64_t maxSeq = 0;                                 ///< 0: from the model
  std::optional<Pooling> pooling;                     ///< unset = from the model folder
  int normalize = -1;                                 ///< -1 = from the model folder
  std::string saveTemps;                              ///< keep generated sources here
  std::string pipeline;                               ///< comma list; "" = the default pipeline
  std::vector<std::string> disabledPasses;
  PipelineOptions pipelineOptions;                    ///< `passes` is filled from pipeline/disabled
  std::string quantize = "none";                      ///< "none" | "int8" | "bf16" (appends kQuantizeInt8Pass
                                                      ///< or kConvertBf16Pass)
  std::vector<std::string> quantizeSkip;              ///< --quantize-skip patterns
  std::string calibrate;                              ///< --calibrate ranges file ("" = dynamic)
  std::optional<uint64_t> randomWeightsSeed;          ///< --weights=random:SEED (no weight bytes stored)
  bool allowNonFinite = false;                        ///< --allow-nonfinite: accept NaN/Inf weights
  std::string tokenizerDir;                           ///< --tokenizer: ONNX models' config + tokenizer folder
  bool tokenHeads = true;                             ///< false (--no-token-heads): leave bge-m3's heads out
  bool allowPackedPlan = true;                        ///< false: the padded CPU plan even where a packed
                                                      ///< one is possible (tests compare the two)
};

/// The value of `--weights`: "file" (model.safetensors) gives nullopt,
/// "random:SEED" (SEED a decimal uint64) gives SEED; anything else is an error.
llvm::Expected<std::optional<uint64_t>> parseWeightsOption(const std::string &value);

/// The default pipeline's short pass names, in order.
const std::vector<std::string> &defaultPassNames();

/// Every pass name the pipeline options accept (default + opt-in passes).
const std::vector<std::string> &knownPassNames();

/// CPU levels when --cpu is not given: x86-64-v4 then x86-64-v3 for fp32
/// builds; x86-64-v4-amx, x86-64-v4-vnni then x86-64-v3 for int8 builds,
/// x86-64-v4-amx, x86-64-v4-bf16 then x86-64-v3 for bf16 builds (the runtime runs the
/// first this CPU supports).
std::vector<std::string> defaultCpuLevels(const std::string &quantize);

/// What a build runs: `passes`, then precisionPasses(quantize) ("none":
/// none), then kFormFusionGroupsPass, each not there yet and not in
/// `disabled`. A `quantize` other than none, int8 and bf16 is an error.
llvm::Expected<std::vector<std::string>> buildPipeline(std::vector<std::string> passes,
                                                       const std::string &quantize,
                                                       const std::vector<std::string> &disabled = {});

/// `pipeline` ("" = default, "none" = no optimisation: the unfused form,
/// kDecomposePass alone, else a comma list of short names) minus `disabled`; unknown names are an error listing the known ones.
llvm::Expected<std::vector<std::string>> resolvePipeline(const std::string &pipeline,
                                                         const std::vector<std::string> &disabled);

/// Runs the passes on `module` one by one (printing/timing/counting as
/// asked); `weights` is the store its enc.weight ops name, which the passes
/// that create weights add to (null: the IR changes only).
llvm::Error runEncPipeline(mlir::ModuleOp module, mlir::enc::WeightStore *weights,
                           const PipelineOptions &options);

/// Builds one code object per CPU level name (best first).
llvm::Expected<std::vector<CodeObject>> buildCodeObjects(const std::string &source,
                                                         const std::vector<std::string> &cpuLevels,
                                                         const std::string &saveTemps, const ProgressFn &progress);

/// Builds the CUDA fatbin for `archs` with nvcc (in a temporary directory, or
/// SAVE_TEMPS/cuda).
llvm::Expected<CodeObject> buildFatbin(const std::string &source, const std::vector<std::string> &archs,
                                       const std::string &saveTemps, const ProgressFn &progress);
/// "cpu", "cuda" or both, comma-separated (--target); unknown names are an error.
llvm::Expected<std::vector<std::string>> parseTargets(const std::string &list);
/// A context with the dialects encc uses loaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// `encc compile`: progress lines go to `progress`; --emit=mlir / --emit=cpp
/// print to `out` instead of writing the artifact.
llvm::Error compileModel(const CompileOptions &options, llvm::raw_ostream &out, const ProgressFn &progress);

} // namespace encc

#endif // ENCC_COMPILER_COMPILEDRIVER_H
