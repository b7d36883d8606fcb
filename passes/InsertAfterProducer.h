//===- InsertAfterProducer.h - Where a pass puts an op converting a value -===//
//
// The precision passes add one conversion op per Linear input (enc.quantize,
// enc.to_bf16) right after the value's producer; for a function argument,
// after the conversions of earlier arguments, so their order follows the
// arguments'.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_PASSES_INSERTAFTERPRODUCER_H
#define ENC_PASSES_INSERTAFTERPRODUCER_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::enc {

/// Sets `b`'s insertion point for a ConversionOp (an op with getX()) of `x`.
template <typename ConversionOp>
void setInsertionPointAfterProducer(OpBuilder &b, Value x) {
  if (Operation *def = x.getDefiningOp()) {
    b.setInsertionPointAfter(def);
    return;
  }
  Block *block = cast<BlockArgument>(x).getOwner();
  auto it = llvm::find_if_not(*block, [](Operation &op) {
    auto c = dyn_cast<ConversionOp>(op);
    return c && isa<BlockArgument>(c.getX());
  });
  b.setInsertionPoint(block, it);
}

} // namespace mlir::enc

#endif // ENC_PASSES_INSERTAFTERPRODUCER_H
