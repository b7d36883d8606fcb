//===- CompileDriver.cpp - Model folder -> .encm --------------------------===//

#include "compiler/driver/CompileDriver.h"

#include "compiler/codegen/cpu/CpuCodegen.h"
#include "compiler/codegen/cuda/CudaCodegen.h"
#include "compiler/driver/ArtifactWriter.h"
#include "frontends/RegularFile.h"
#include "frontends/ImportModel.h"
#include "ir/EncDialect.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <optional>

using namespace encc;

namespace {

class Stopwatch {
public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::string fmt(const char *f, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, f, v);
  return buf;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

const std::vector<std::string> &encc::defaultPassNames() { return mlir::enc::defaultPipeline(); }

const std::vector<std::string> &encc::knownPassNames() { return mlir::enc::knownPassNames(); }

std::vector<std::string> encc::defaultCpuLevels(const std::string &quantize) {
  if (quantize == "int8")
    return {"x86-64-v4-amx", "x86-64-v4-vnni", "x86-64-v3"};
  if (quantize == "bf16")
    return {"x86-64-v4-amx", "x86-64-v4-bf16", "x86-64-v3"};
  return {"x86-64-v4", "x86-64-v3"};
}

llvm::Expected<std::optional<uint64_t>> encc::parseWeightsOption(const std::string &value) {
  if (value == "file")
    return std::nullopt;
  llvm::StringRef seed(value);
  uint64_t n = 0;
  if (seed.consume_front("random:") && !seed.empty() && seed.find_first_not_of("0123456789") == llvm::StringRef::npos &&
      !seed.getAsInteger(10, n))
    return n;
  return llvm::createStringError("--weights expects file or random:SEED (SEED a non-negative integer), got '%s'",
                                 value.c_str());
}

llvm::Expected<std::vector<std::string>> encc::buildPipeline(std::vector<std::string> passes,
                                                             const std::string &quantize,
                                                             const std::vector<std::string> &disabled) {
  if (quantize != "none" && quantize != "int8" && quantize != "bf16")
    return llvm::createStringError("--quantize expects none, int8 or bf16, got '%s'", quantize.c_str());
  std::vector<std::string> last = precisionPasses(quantize);
  last.push_back(kFormFusionGroupsPass);
  for (const std::string &pass : last)
    if (!contains(passes, pass) && !contains(disabled, pass))
      passes.push_back(pass);
  return passes;
}

std::vector<std::string> encc::precisionPasses(const std::string &quantize) {
  if (quantize == "int8")
    return {kQuantizeInt8Pass, kAttentionBf16AmxPass};
  if (quantize == "bf16")
    return {kConvertBf16Pass, kAttentionBf16Pass};
  return {};
}

llvm::Expected<std::vector<std::string>> encc::resolvePipeline(const std::string &pipeline,
                                                               const std::vector<std::string> &disabled) {
  const std::vector<std::string> &known = knownPassNames();
  auto check = [&](const std::string &name, const char *flag) -> llvm::Error {
    if (contains(known, name))
      return llvm::Error::success();
    return llvm::createStringError("%s: unknown pass '%s' (passes: %s)", flag, name.c_str(),
                                   llvm::join(known, ", ").c_str());
  };
  std::vector<std::string> passes;
  if (pipeline.empty()) {
    passes = defaultPassNames();
  } else if (pipeline == "none") {
    passes = {kDecomposePass};
  } else {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(pipeline).split(parts, ',', -1, false);
    for (llvm::StringRef p : parts) {
      std::string name = p.trim().str();
      if (auto err = check(name, "--pipeline"))
        return std::move(err);
      passes.push_back(name);
    }
  }
  for (const std::string &d : disabled) {
    if (auto err = check(d, "--disable-pass"))
      return std::move(err);
    passes.erase(std::remove(passes.begin(), passes.end(), d), passes.end());
  }
  return passes;
}

llvm::Error encc::runEncPipeline(mlir::ModuleOp module, mlir::enc::WeightStore *weights,
                                 const PipelineOptions &opt) {
  // Debian's LLVM compiles mlir::Pass::Statistic out (NDEBUG), so the enc
  // passes count what they change in themselves; a collector sums those.
  mlir::enc::PassCounts counts;
  std::vector<std::pair<std::string, double>> times;
  mlir::enc::EncPassOptions passOptions;
  passOptions.weights = weights;
  passOptions.quantizeSkip = opt.quantizeSkip;
  passOptions.quantizeCalibration = opt.calibration;
  for (const std::string &name : opt.passes) {
    mlir::PassManager pm(module.getContext());
    pm.addInstrumentation(mlir::enc::createPassCountCollector(counts));
    std::string error;
    if (mlir::failed(mlir::enc::addPassByName(pm, name, &error, passOptions)))
      return llvm::createStringError("%s", error.c_str());
    Stopwatch sw;
    if (mlir::failed(pm.run(module)))
      return llvm::createStringError("pass '%s' failed (see the diagnostics above)", name.c_str());
    times.emplace_back(name, sw.seconds() * 1e3);
    if (opt.printIrAfterAll || contains(opt.printIrAfter, name)) {
      llvm::errs() << "// -----// IR after " << name << " //----- //\n";
      module.print(llvm::errs());
      llvm::errs() << "\n";
    }
  }
  if (opt.statistics) {
    llvm::errs() << "===-------------------------------------------------------------------------===\n"
                 << "                             pass statistics\n"
                 << "===-------------------------------------------------------------------------===\n";
    for (const std::string &name : opt.passes) {
      llvm::errs() << name << "\n";
      auto it = counts.find(name);
      if (it == counts.end() || it->second.empty())
        llvm::errs() << "  (no counters)\n";
      else
        for (const auto &stat : it->second)
          llvm::errs() << "  " << llvm::right_justify(std::to_string(stat.second), 6) << " " << stat.first << "\n";
    }
  }
  if (opt.timing) {
    double total = 0;
    for (auto &t : times)
      total += t.second;
    llvm::errs() << "===-------------------------------------------------------------------------===\n"
                 << "                             pass execution timing\n"
                 << "===-------------------------------------------------------------------------===\n";
    for (auto &t : times)
      llvm::errs() << "  " << llvm::right_justify(fmt("%.3f", t.second), 10) << " ms  "
                   << llvm::right_justify(fmt("%.1f", total > 0 ? 100 * t.second / total : 0), 5) << " %  "
                   << t.first << "\n";
    llvm::errs() << "  " << llvm::right_justify(fmt("%.3f", total), 10) << " ms  100.0 %  total\n";
  }
  return llvm::Error::success();
}

namespace {

/// Runs build(workDir) in SAVE_TEMPS/SUBDIR (kept), or in a fresh temporary
/// directory that is removed afterwards.
llvm::Expected<CodeObject> buildInWorkDir(const std::string &saveTemps, const std::string &subdir,
                                          llvm::function_ref<llvm::Expected<CodeObject>(const std::string &)> build) {
  std::string workDir = saveTemps;
  if (workDir.empty()) {
    llvm::SmallString<128> tmp;
    if (auto ec = llvm::sys::fs::createUniqueDirectory("encc", tmp))
      return llvm::createStringError(ec, "cannot create a temporary directory: %s", ec.message().c_str());
    workDir = std::string(tmp);
  } else {
    workDir += "/" + subdir;
    llvm::sys::fs::create_directories(workDir);
  }
  auto object = build(workDir);
  if (saveTemps.empty())
    llvm::sys::fs::remove_directories(workDir);
  return object;
}

} // namespace

llvm::Expected<std::vector<CodeObject>> encc::buildCodeObjects(const std::string &source,
                                                               const std::vector<std::string> &cpuLevels,
                                                               const std::string &saveTemps,
                                                               const ProgressFn &progress) {
  std::vector<CpuLevel> levels;
  for (const std::string &name : cpuLevels) {
    auto level = parseCpuLevel(name);
    if (!level)
      return level.takeError();
    levels.push_back(*level);
  }
  // One host-compiler process per level, as many at once as there are cores
  // (the levels are independent; MiniLM's two fp32 levels: 3.5 -> 2 s).
  for (const std::string &name : cpuLevels)
    progress("compiling kernels for " + name + " ...");
  std::vector<std::optional<llvm::Expected<CodeObject>>> built(levels.size());
  std::vector<double> seconds(levels.size());
  llvm::parallelFor(0, levels.size(), [&](size_t i) {
    Stopwatch sw;
    built[i].emplace(buildInWorkDir(saveTemps, cpuLevels[i], [&](const std::string &workDir) {
      return buildCpuCodeObject(source, levels[i], workDir);
    }));
    seconds[i] = sw.seconds();
  });
  std::vector<CodeObject> objects;
  llvm::Error firstError = llvm::Error::success();
  for (size_t i = 0; i < levels.size(); ++i) {
    llvm::Expected<CodeObject> &object = *built[i];
    if (!object) {
      if (firstError)
        llvm::consumeError(object.takeError());
      else
        firstError = object.takeError();
      continue;
    }
    progress("  " + object->target + ": " + fmt("%.0f KB", object->bytes.size() / 1e3) + " in " +
             fmt("%.1f s", seconds[i]));
    objects.push_back(std::move(*object));
  }
  if (firstError)
    return std::move(firstError);
  return objects;
}

std::unique_ptr<mlir::MLIRContext> encc::makeContext() {
  auto ctx = std::make_unique<mlir::MLIRContext>();
  ctx->loadDialect<mlir::enc::EncDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  return ctx;
}

llvm::Expected<CodeObject> encc::buildFatbin(const std::string &source, const std::vector<std::string> &archs,
                                              const std::string &saveTemps, const ProgressFn &progress) {
  Stopwatch sw;
  progress("compiling CUDA kernels for " + llvm::join(archs, ",") + " with nvcc ...");
  auto fatbin = buildInWorkDir(saveTemps, "cuda", [&](const std::string &workDir) {
    return buildCudaFatbin(source, archs, workDir);
  });
  if (!fatbin)
    return fatbin.takeError();
  progress("  cuda: " + fmt("%.0f KB", fatbin->bytes.size() / 1e3) + " fatbin in " + fmt("%.1f s", sw.seconds()));
  return fatbin;
}

llvm::Expected<std::vector<std::string>> encc::parseTargets(const std::string &list) {
  std::vector<std::string> targets;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(list).split(parts, ',', -1, false);
  for (llvm::StringRef p : parts) {
    std::string t = p.trim().str();
    if (t != "cpu" && t != "cuda")
      return llvm::createStringError("--target: unknown target '%s' (expected cpu, cuda or cuda,cpu)", t.c_str());
    if (!contains(targets, t))
      targets.push_back(t);
  }
  if (targets.empty())
    return llvm::createStringError("--target expects cpu, cuda or cuda,cpu");
  return targets;
}

llvm::Error encc::compileModel(const CompileOptions &opt, llvm::raw_ostream &out, const ProgressFn &progress) {
  auto ctx = makeContext();
  const bool wantCpu = contains(opt.targets, "cpu"), wantCuda = contains(opt.targets, "cuda");
  if (!wantCpu && !wantCuda)
    return llvm::createStringError("--target: nothing to build (expected cpu and/or cuda)");
  if (opt.cudaDType != "f16" && opt.cudaDType != "bf16")
    return llvm::createStringError("--cuda-dtype expects f16 or bf16, got '%s'", opt.cudaDType.c_str());
  if (opt.emit != "artifact" && opt.emit != "mlir" && opt.emit != "cpp" && opt.emit != "cu")
    return llvm::createStringError("--emit expects artifact, mlir, cpp or cu, got '%s'", opt.emit.c_str());
  // Before any import or codegen: what cannot be emitted, and a missing nvcc.
  if (opt.quantize == "bf16" && wantCuda)
    return llvm::createStringError("--quantize=bf16 is a CPU precision (bf16 Linears through AVX512-BF16); "
                                   "the CUDA plan picks its own with --cuda-dtype=f16|bf16: compile with "
                                   "--target=cpu, or --target=cuda without --quantize");
  if ((opt.emit == "cpp" && !wantCpu) || (opt.emit == "cu" && !wantCuda))
    return llvm::createStringError("--emit=%s needs --target=%s", opt.emit.c_str(),
                                   opt.emit == "cu" ? "cuda" : "cpu");
  if (wantCuda && opt.emit == "artifact")
    if (auto nvcc = findNvcc(); !nvcc)
      return nvcc.takeError();
  if (opt.emit == "artifact")
    if (llvm::Error e = checkOutputTarget(opt.output)) // before the import, not after it
      return e;
  const std::vector<std::string> cpuLevels = opt.cpuLevels.empty() ? defaultCpuLevels(opt.quantize) : opt.cpuLevels;
  for (const std::string &name : cpuLevels)
    if (auto level = parseCpuLevel(name); !level)
      return level.takeError();
  PipelineOptions po = opt.pipelineOptions;
  auto passes = resolvePipeline(opt.pipeline, opt.disabledPasses);
  if (!passes)
    return passes.takeError();
  auto quantized = buildPipeline(*passes, opt.quantize, opt.disabledPasses);
  if (!quantized)
    return quantized.takeError();
  po.passes = *quantized;
  if (opt.quantize == "none" && !opt.quantizeSkip.empty())
    return llvm::createStringError("--quantize-skip needs --quantize=int8 or bf16");
  if (opt.quantize != "int8" && !opt.calibrate.empty())
    return llvm::createStringError("--calibrate needs --quantize=int8");
  if (!opt.calibrate.empty())
    if (auto file = readRegularFile(opt.calibrate, uint64_t(256) << 20, "calibration file"); !file)
      return llvm::createStringError("--calibrate: %s", llvm::toString(file.takeError()).c_str());
  po.quantizeSkip = opt.quantizeSkip;
  po.calibration = opt.calibrate;
  for (const std::string &name : po.printIrAfter)
    if (!contains(knownPassNames(), name))
      return llvm::createStringError("--print-ir-after: unknown pass '%s' (passes: %s)", name.c_str(),
                                     llvm::join(knownPassNames(), ", ").c_str());

  Stopwatch total, sw;
  ImportOptions io;
  io.maxSeq = opt.maxSeq;
  io.pooling = opt.pooling;
  io.normalize = opt.normalize;
  io.randomWeightsSeed = opt.randomWeightsSeed;
  io.allowNonFinite = opt.allowNonFinite;
  io.tokenHeads = opt.tokenHeads;
  io.tokenizerDir = opt.tokenizerDir;
  auto model = importModel(*ctx, opt.modelDir, io);
  if (!model)
    return model.takeError();
  // The dtypes the weights are held in (a checkpoint's, as stored).
  std::set<mlir::enc::WeightType> types;
  for (const auto &[name, t] : model->weights.all())
    types.insert(t.type);
  std::string held;
  for (mlir::enc::WeightType type : types)
    held += std::string(held.empty() ? "" : " + ") + mlir::enc::weightTypeName(type);
  const std::string weightsKind =
      opt.randomWeightsSeed ? " of RANDOM weights, seed " + std::to_string(*opt.randomWeightsSeed) +
                                  ": outputs are meaningless"
                            : " of " + held + " weights";
  progress("imported " + model->description.architecture + " (" + std::to_string(model->description.layers) +
           " layers, hidden " + std::to_string(model->description.hidden) + ", " + fmt("%.1f MB", model->weights.totalBytes() / 1e6) +
           weightsKind + ") in " + fmt("%.2f s", sw.seconds()));
  if (!model->tokenizer.note.empty())
    progress("note: " + model->tokenizer.note);
  if (opt.quantize == "int8" && !model->description.int8KeepFloat.empty()) {
    const std::vector<std::string> &keep = model->description.int8KeepFloat;
    po.quantizeSkip.insert(po.quantizeSkip.end(), keep.begin(), keep.end());
    progress("note: int8 keeps " + llvm::join(keep, ", ") + " in float (" + model->description.architecture +
             "'s default: int8 there costs accuracy)");
  }
  if (opt.quantize != "none" && !model->description.keepFloat.empty()) {
    const std::vector<std::string> &keep = model->description.keepFloat;
    po.quantizeSkip.insert(po.quantizeSkip.end(), keep.begin(), keep.end());
    progress("note: " + opt.quantize + " keeps " + llvm::join(keep, ", ") + " in float");
  }
  if (wantCuda && !model->description.tokenHeads.empty())
    return llvm::createStringError(
        "--target=cuda: %s has per-token heads (bge-m3's sparse and ColBERT outputs), which run on the CPU only "
        "for now (compile with --target=cpu, or --no-token-heads for the dense output alone)",
        opt.modelDir.c_str());
  if (wantCuda && model->description.numLabels > 0)
    return llvm::createStringError(
        "--target=cuda: %s is a cross-encoder (a sequence-classification head); those run on the CPU only "
        "for now (compile with --target=cpu)",
        opt.modelDir.c_str());

  sw = Stopwatch();
  if (auto err = runEncPipeline(*model->module, &model->weights, po))
    return err;
  progress("ran passes [" + llvm::join(po.passes, ", ") + "] in " + fmt("%.2f s", sw.seconds()));
  // A known pass this build would not have run anyway: say so (a typo'd
  // name was refused above; this one is only a no-op).
  auto full = resolvePipeline(opt.pipeline, {});
  auto wouldRun = full ? buildPipeline(*full, opt.quantize) : full.takeError();
  if (wouldRun) {
    for (const std::string &d : opt.disabledPasses)
      if (!contains(*wouldRun, d))
        progress("note: --disable-pass " + d + ": not among this build's passes, nothing left out");
  } else {
    llvm::consumeError(wouldRun.takeError());
  }
  if (opt.emit == "mlir") {
    model->module->print(out);
    return llvm::Error::success();
  }
  // Every wanted backend says whether it can lower the model before any of
  // them generates code (one line naming the op and attribute).
  if (wantCpu && opt.emit != "cu")
    if (auto err = checkCpuLowerable(*model->module))
      return err;
  if (wantCuda)
    if (auto err = checkCudaLowerable(*model->module))
      return err;

  ArtifactContents contents;
  std::optional<CpuCodegenResult> cpuCode;
  if (wantCpu && opt.emit != "cu") {
    auto code = generateCpuCode(*model->module, model->weights, opt.allowPackedPlan);
    if (!code)
      return code.takeError();
    progress("generated CPU code: " + std::to_string(code->plan.steps.size()) + " steps, " +
             fmt("%.0f KB", code->source.size() / 1e3) + " of C++");
    if (opt.emit == "cpp") {
      out << code->source;
      return llvm::Error::success();
    }
    cpuCode = std::move(*code);
  }
  std::optional<CudaProgram> cuda;
  if (wantCuda) {
    CudaCodegenOptions co;
    co.dtype = opt.cudaDType == "bf16" ? DType::BF16 : DType::F16;
    auto attention = parseCudaAttentionKernel(opt.cudaAttention);
    if (!attention)
      return attention.takeError();
    co.attention = *attention;
    auto code = generateCudaCode(*model->module, model->weights, co);
    if (!code)
      return code.takeError();
    progress("generated CUDA code: " + std::to_string(code->plan.steps.size()) + " steps (" + opt.cudaDType +
             "), " + fmt("%.0f KB", code->source.size() / 1e3) + " of CUDA C++");
    if (opt.emit == "cu") {
      out << code->source;
      return llvm::Error::success();
    }
    auto fatbin = buildFatbin(code->source, opt.cudaArchs.empty() ? defaultCudaArchs() : opt.cudaArchs,
                              opt.saveTemps, progress);
    if (!fatbin)
      return fatbin.takeError();
    cuda = CudaProgram{std::move(code->plan), co.dtype, std::move(*fatbin)};
    contents.cuda = &*cuda;
  }

  if (cpuCode) {
    auto objects = buildCodeObjects(cpuCode->source, cpuLevels, opt.saveTemps, progress);
    if (!objects)
      return objects.takeError();
    contents.codeObjects = std::move(*objects);
    contents.plan = &cpuCode->plan;
  }
  contents.model = &model->description;
  contents.tokenizer = &model->tokenizer;
  contents.weights = &model->weights;
  contents.passes = po.passes;
  contents.source = opt.modelDir;
  contents.randomWeightsSeed = opt.randomWeightsSeed;
  if (auto err = writeArtifact(opt.output, contents))
    return err;
  uint64_t size = 0;
  llvm::sys::fs::file_size(opt.output, size);
  progress("wrote " + opt.output + " (" + fmt("%.1f MB", size / 1e6) +
           (opt.randomWeightsSeed ? std::string(", weights generated at load") : std::string()) + ") in " + fmt("%.1f s", total.seconds()) +
           " total");
  return llvm::Error::success();
}
