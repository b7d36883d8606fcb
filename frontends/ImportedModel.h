//===- ImportedModel.h - What a frontend hands to the compiler ------------===//
#ifndef ENCC_FRONTENDS_IMPORTEDMODEL_H
#define ENCC_FRONTENDS_IMPORTEDMODEL_H

#include "frontends/ModelDescription.h"
#include "ir/WeightStore.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace encc {

/// The enc module (`@forward`), the weights its `enc.weight` ops name, and the
/// frontend-neutral description and tokenizer the artifact records.
struct ImportedModel {
  ModelDescription description;
  TokenizerData tokenizer;
  mlir::enc::WeightStore weights;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

} // namespace encc

#endif // ENCC_FRONTENDS_IMPORTEDMODEL_H
