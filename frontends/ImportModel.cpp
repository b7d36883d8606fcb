//===- ImportModel.cpp - Any supported model source -> ImportedModel ------===//
#include "frontends/ImportModel.h"

#include "frontends/onnx/OnnxImport.h"

using namespace encc;

llvm::Expected<ImportedModel> encc::importModel(mlir::MLIRContext &ctx, const std::string &path,
                                                const ImportOptions &opts) {
  if (!isOnnxPath(path)) {
    if (!opts.tokenizerDir.empty())
      return llvm::createStringError("--tokenizer applies to ONNX models; %s is a Hugging Face folder, whose "
                                     "tokenizer files are read from it",
                                     path.c_str());
    return importHFModel(ctx, path, opts);
  }
  if (opts.randomWeightsSeed)
    return llvm::createStringError("--weights=random applies to Hugging Face folders (config.json); %s is an "
                                   "ONNX model, whose weights are its initialisers",
                                   path.c_str());
  OnnxImportOptions o;
  o.maxSeq = opts.maxSeq;
  o.pooling = opts.pooling;
  o.normalize = opts.normalize;
  o.tokenizerDir = opts.tokenizerDir;
  o.allowNonFinite = opts.allowNonFinite;
  return importOnnxModel(ctx, path, o);
}
