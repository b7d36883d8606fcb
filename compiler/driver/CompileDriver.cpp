//===- CompileDriver.cpp - Model folder -> .encm --------------------------===//

#include "compiler/driver/CompileDriver.h"

#include "compiler/codegen/cpu/CpuCodegen.h"
#include "compiler/driver/ArtifactWriter.h"
#include "frontends/hf/HFImport.h"
#include "ir/EncDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

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

/// The foundation pipeline; each fusion pass adds itself here.
const std::vector<std::string> &pipelinePasses() {
  static const std::vector<std::string> passes = {"canonicalize", "cse"};
  return passes;
}

llvm::Error runPipeline(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (mlir::failed(pm.run(module)))
    return llvm::createStringError("the pass pipeline failed (see the diagnostics above)");
  return llvm::Error::success();
}

} // namespace

llvm::Error encc::compileModel(const CompileOptions &opt, llvm::raw_ostream &out,
                               const std::function<void(const std::string &)> &progress) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::enc::EncDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();

  std::vector<CpuLevel> levels;
  for (const std::string &name : opt.cpuLevels) {
    auto level = parseCpuLevel(name);
    if (!level)
      return level.takeError();
    levels.push_back(*level);
  }

  Stopwatch total, sw;
  ImportOptions io;
  io.maxSeq = opt.maxSeq;
  io.pooling = opt.pooling;
  io.normalize = opt.normalize;
  auto model = importHFModel(ctx, opt.modelDir, io);
  if (!model)
    return model.takeError();
  progress("imported " + model->config.modelType + " (" + std::to_string(model->config.layers) + " layers, hidden " +
           std::to_string(model->config.hidden) + ", " + fmt("%.1f MB", model->weights.totalBytes() / 1e6) +
           " of weights) in " + fmt("%.2f s", sw.seconds()));

  sw = Stopwatch();
  if (auto err = runPipeline(*model->module))
    return err;
  progress("ran passes [" + llvm::join(pipelinePasses(), ", ") + "] in " + fmt("%.2f s", sw.seconds()));
  if (opt.emit == "mlir") {
    model->module->print(out);
    return llvm::Error::success();
  }

  sw = Stopwatch();
  auto code = generateCpuCode(*model->module, model->weights);
  if (!code)
    return code.takeError();
  progress("generated CPU code: " + std::to_string(code->plan.steps.size()) + " steps, " +
           fmt("%.0f KB", code->source.size() / 1e3) + " of C++");
  if (opt.emit == "cpp") {
    out << code->source;
    return llvm::Error::success();
  }

  ArtifactContents contents;
  for (size_t i = 0; i < levels.size(); ++i) {
    sw = Stopwatch();
    std::string workDir = opt.saveTemps;
    llvm::SmallString<128> tmp;
    if (workDir.empty()) {
      if (auto ec = llvm::sys::fs::createUniqueDirectory("encc", tmp))
        return llvm::createStringError(ec, "cannot create a temporary directory: %s", ec.message().c_str());
      workDir = std::string(tmp);
    } else {
      workDir += "/" + opt.cpuLevels[i];
      llvm::sys::fs::create_directories(workDir);
    }
    progress("compiling kernels for " + opt.cpuLevels[i] + " ...");
    auto object = buildCpuCodeObject(code->source, levels[i], workDir);
    if (opt.saveTemps.empty())
      llvm::sys::fs::remove_directories(workDir);
    if (!object)
      return object.takeError();
    progress("  " + object->target + ": " + fmt("%.0f KB", object->bytes.size() / 1e3) + " in " +
             fmt("%.1f s", sw.seconds()));
    contents.codeObjects.push_back(std::move(*object));
  }

  contents.config = &model->config;
  contents.tokenizer = &model->tokenizer;
  contents.plan = &code->plan;
  contents.weights = &model->weights;
  contents.passes = pipelinePasses();
  contents.source = opt.modelDir;
  if (auto err = writeArtifact(opt.output, contents))
    return err;
  uint64_t size = 0;
  llvm::sys::fs::file_size(opt.output, size);
  progress("wrote " + opt.output + " (" + fmt("%.1f MB", size / 1e6) + ") in " + fmt("%.1f s", total.seconds()) +
           " total");
  return llvm::Error::success();
}
