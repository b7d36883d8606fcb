//===- ArithmeticMatchers.h - Matching decomposed arithmetic --------------===//
//
// What the recognition passes share: the value of a scalar constant, the
// kind of an enc.binary / enc.unary, and a commutative product flattened into
// its factors.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_PASSES_ARITHMETICMATCHERS_H
#define ENC_PASSES_ARITHMETICMATCHERS_H

#include "ir/EncOps.h"

#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <optional>

namespace mlir::enc {

/// The value of `v` when it is an enc.constant whose elements are all equal.
inline std::optional<float> scalarConstant(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(c.getValue());
  if (!dense || dense.getNumElements() == 0)
    return std::nullopt;
  const float first = *dense.getValues<float>().begin();
  for (float x : dense.getValues<float>())
    if (x != first)
      return std::nullopt;
  return first;
}

/// `v` is a scalar constant within a relative `tol` of `want`.
inline bool isConstantNear(Value v, double want, double tol = 1e-4) {
  auto c = scalarConstant(v);
  return c && std::abs(double(*c) - want) <= tol * std::abs(want);
}

/// `v`'s defining op when it is an enc.binary of `kind`.
inline BinaryOp binaryOf(Value v, BinaryKind kind) {
  auto op = v.getDefiningOp<BinaryOp>();
  return op && op.getKind() == kind ? op : BinaryOp();
}

/// `v`'s defining op when it is an enc.unary of `kind`.
inline UnaryOp unaryOf(Value v, UnaryKind kind) {
  auto op = v.getDefiningOp<UnaryOp>();
  return op && op.getKind() == kind ? op : UnaryOp();
}

/// The operand of the commutative `op` that is not `one` (null when neither is).
inline Value otherOperand(BinaryOp op, Value one) {
  if (op.getLhs() == one)
    return op.getRhs();
  if (op.getRhs() == one)
    return op.getLhs();
  return {};
}

/// The factors of the product rooted at `v`: enc.binary<mul> ops are opened
/// (the root always; inner ones only when they have one user, so nothing
/// another op reads is absorbed), anything else is a factor. `muls` gets the
/// opened ops. At most `maxFactors` factors; false past that.
inline bool flattenProduct(Value v, SmallVectorImpl<Value> &factors, SmallVectorImpl<Operation *> &muls,
                           size_t maxFactors = 4, bool root = true) {
  auto mul = binaryOf(v, BinaryKind::mul);
  if (mul && (root || v.hasOneUse())) {
    muls.push_back(mul);
    return flattenProduct(mul.getLhs(), factors, muls, maxFactors, false) &&
           flattenProduct(mul.getRhs(), factors, muls, maxFactors, false);
  }
  factors.push_back(v);
  return factors.size() <= maxFactors;
}

} // namespace mlir::enc

#endif // ENC_PASSES_ARITHMETICMATCHERS_H
