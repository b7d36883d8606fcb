//===- PackedQkv.h - q, k, v as one packed tensor -------------------------===//
//
// enc.attention reads either q, k, v or one packed qkv [B, S, 3H]. The packed
// form is taken wherever q, k and v are the three outputs, in order, of one
// enc.split {parts = 3} (what enc-fuse-qkv leaves): fuse-attention packs both
// the attention it recognises and the attention a frontend emitted.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_PASSES_PACKEDQKV_H
#define ENC_PASSES_PACKEDQKV_H

#include "ir/EncOps.h"

namespace mlir::enc {

/// The split's input when q, k, v are results 0, 1, 2 of one
/// `enc.split {parts = 3}`; null otherwise.
inline Value packedQkv(Value q, Value k, Value v) {
  auto split = q.getDefiningOp<SplitOp>();
  if (!split || split.getParts() != 3)
    return {};
  auto outs = split.getOutputs();
  return q == outs[0] && k == outs[1] && v == outs[2] ? split.getX() : Value();
}

} // namespace mlir::enc

#endif // ENC_PASSES_PACKEDQKV_H
