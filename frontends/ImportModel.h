//===- ImportModel.h - Any supported model source -> ImportedModel --------===//
#ifndef ENCC_FRONTENDS_IMPORTMODEL_H
#define ENCC_FRONTENDS_IMPORTMODEL_H

#include "frontends/ImportedModel.h"
#include "frontends/hf/HFImport.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <string>

namespace encc {

/// An `.onnx` file goes to the ONNX frontend (frontends/onnx), anything else
/// is a Hugging Face model folder (frontends/hf). `opts.tokenizerDir` is the
/// ONNX frontend's only; random weights are the HF frontend's only.
llvm::Expected<ImportedModel> importModel(mlir::MLIRContext &ctx, const std::string &path, const ImportOptions &opts);

} // namespace encc

#endif // ENCC_FRONTENDS_IMPORTMODEL_H
