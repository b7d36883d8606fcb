//===- EmitPooling.h - A model's pooled output, in enc ops ----------------===//
//
// Every frontend ends an embedding model the same way: the Pooling its files
// (or --pooling) ask for as one enc.pool, then enc.l2norm when they ask for
// normalised embeddings. One exhaustive switch maps ModelDescription's
// Pooling to the op's mode.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_EMITPOOLING_H
#define ENCC_FRONTENDS_EMITPOOLING_H

#include "frontends/ModelDescription.h"
#include "ir/EncOps.h"

#include "mlir/IR/Builders.h"

namespace encc {

/// The pool op's mode for `pooling`; none for Pooling::None (no pooled output).
inline std::optional<mlir::enc::PoolingMode> poolOpMode(Pooling pooling) {
  switch (pooling) {
  case Pooling::None: return std::nullopt;
  case Pooling::Cls: return mlir::enc::PoolingMode::cls;
  case Pooling::Mean: return mlir::enc::PoolingMode::mean;
  case Pooling::Last: return mlir::enc::PoolingMode::last;
  case Pooling::Splade: return mlir::enc::PoolingMode::splade;
  }
  return std::nullopt; // unreachable (-Werror=switch)
}

/// The pooled output of `hidden` [B, S, H] (or null for Pooling::None), named
/// "pooling" (and "normalize") in locations under `file`.
inline mlir::Value emitPooling(mlir::OpBuilder &b, mlir::Location file, Pooling pooling, bool normalize,
                               mlir::Value hidden, mlir::Value lengths) {
  const std::optional<mlir::enc::PoolingMode> mode = poolOpMode(pooling);
  if (!mode)
    return {};
  auto at = [&](const char *name) { return mlir::NameLoc::get(b.getStringAttr(name), file); };
  const int64_t h = mlir::cast<mlir::RankedTensorType>(hidden.getType()).getShape().back();
  auto pooledTy = mlir::RankedTensorType::get({mlir::ShapedType::kDynamic, h}, b.getF32Type());
  mlir::Value p = b.create<mlir::enc::PoolOp>(at("pooling"), pooledTy, hidden, lengths, *mode);
  if (normalize)
    p = b.create<mlir::enc::L2NormOp>(at("normalize"), pooledTy, p);
  return p;
}

} // namespace encc

#endif // ENCC_FRONTENDS_EMITPOOLING_H
