//===- Passes.cpp - The enc pipeline and pass registration ----------------===//
#include "passes/Passes.h"

#include "ir/EncDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace mlir::enc {
namespace {
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"
} // namespace
} // namespace mlir::enc

const std::vector<std::string> &mlir::enc::defaultPipeline() {
  static const std::vector<std::string> names = {
      "canonicalize",   "fuse-qkv",       "fuse-scale-mask-softmax",
      "fuse-attention", "fuse-bias-gelu", "fuse-residual-layernorm"};
  return names;
}

const std::vector<std::string> &mlir::enc::knownPassNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = defaultPipeline();
    all.push_back("decompose");
    all.push_back("quantize-linear-int8");
    all.push_back("convert-linear-bf16");
    all.push_back("convert-attention-bf16");
    all.push_back("convert-attention-bf16-amx");
    all.push_back("form-fusion-groups");
    return all;
  }();
  return names;
}

bool mlir::enc::isEncPassName(llvm::StringRef shortName) {
  return llvm::is_contained(knownPassNames(), shortName);
}

llvm::StringRef
mlir::enc::encShortNameForPassArgument(llvm::StringRef passArgument) {
  if (passArgument == "canonicalize" || passArgument == "cse")
    return "canonicalize";
  if (passArgument.consume_front("enc-") && isEncPassName(passArgument))
    return passArgument;
  return "";
}

LogicalResult mlir::enc::addPassByName(OpPassManager &pm,
                                       llvm::StringRef shortName,
                                       std::string *error) {
  return addPassByName(pm, shortName, error, EncPassOptions());
}

LogicalResult mlir::enc::addPassByName(OpPassManager &pm,
                                       llvm::StringRef shortName,
                                       std::string *error,
                                       const EncPassOptions &options) {
  if (shortName == "canonicalize") {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  } else if (shortName == "decompose") {
    pm.addPass(createDecomposePass());
  } else if (shortName == "fuse-qkv") {
    pm.addPass(createFuseQKVPass(options.weights));
  } else if (shortName == "fuse-scale-mask-softmax") {
    pm.addPass(createFuseScaleMaskSoftmaxPass());
  } else if (shortName == "fuse-attention") {
    pm.addPass(createFuseAttentionPass());
  } else if (shortName == "fuse-bias-gelu") {
    pm.addPass(createFuseBiasGeluPass());
  } else if (shortName == "fuse-residual-layernorm") {
    pm.addPass(createFuseResidualLayerNormPass());
  } else if (shortName == "quantize-linear-int8") {
    QuantizeLinearInt8PassOptions q;
    q.skip = options.quantizeSkip; // copied by the pass's constructor
    q.embeddings = options.quantizeEmbeddings;
    q.calibration = options.quantizeCalibration;
    pm.addPass(createQuantizeLinearInt8Pass(q, options.weights));
  } else if (shortName == "form-fusion-groups") {
    pm.addPass(createFormFusionGroupsPass());
  } else if (shortName == "convert-attention-bf16") {
    pm.addPass(createConvertAttentionBf16Pass());
  } else if (shortName == "convert-attention-bf16-amx") {
    pm.addPass(createConvertAttentionBf16AmxPass());
  } else if (shortName == "convert-linear-bf16") {
    ConvertLinearBf16PassOptions o;
    o.skip = options.quantizeSkip;
    o.embeddings = options.quantizeEmbeddings;
    pm.addPass(createConvertLinearBf16Pass(o, options.weights));
  } else {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << "unknown pass '" << shortName << "'; expected one of: ";
    llvm::interleave(knownPassNames(), os, ", ");
    if (error)
      *error = os.str();
    else
      llvm::errs() << "error: " << os.str() << "\n";
    return failure();
  }
  return success();
}

void mlir::enc::buildEncPipeline(OpPassManager &pm,
                                 const EncPipelineOptions &opts) {
  for (const std::string &name : opts.passes) {
    std::string error;
    if (failed(addPassByName(pm, name, &error, opts.passOptions)))
      llvm::report_fatal_error(llvm::Twine("enc pipeline: ") + error,
                               /*gen_crash_diag=*/false);
  }
}

namespace {
struct EncPipelineCLOptions : public PassPipelineOptions<EncPipelineCLOptions> {
  ListOption<std::string> passes{
      *this, "passes",
      llvm::cl::desc("Short names of the steps to run, in order (default: "
                     "canonicalize,fuse-qkv,fuse-scale-mask-softmax,"
                     "fuse-attention,fuse-bias-gelu,fuse-residual-layernorm; "
                     "also: decompose, quantize-linear-int8, convert-linear-bf16, "
                     "convert-attention-bf16, form-fusion-groups)")};
  ListOption<std::string> quantizeSkip{
      *this, "quantize-skip",
      llvm::cl::desc("quantize-linear-int8 / convert-linear-bf16: glob "
                     "patterns on weight names kept in f32")};
};
} // namespace

void mlir::enc::registerEncPasses() {
  registerEncFusionPasses();
  PassPipelineRegistration<EncPipelineCLOptions>(
      "enc-pipeline",
      "The enc fusion pipeline (canonicalize, then each fusion)",
      [](OpPassManager &pm, const EncPipelineCLOptions &cl) {
        EncPipelineOptions opts;
        if (!cl.passes.empty())
          opts.passes.assign(cl.passes.begin(), cl.passes.end());
        opts.passOptions.quantizeSkip.assign(cl.quantizeSkip.begin(),
                                             cl.quantizeSkip.end());
        buildEncPipeline(pm, opts);
      });
}
