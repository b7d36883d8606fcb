//===- RecognizeGelu.cpp - elementwise GELU forms -> enc.gelu -------------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/ArithmeticMatchers.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mlir::enc {
#define GEN_PASS_DEF_RECOGNIZEGELUPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// `v` is x / √2 or x * (1/√2) (one user).
bool isXOverSqrt2(Value v, Value x) {
  if (!v.hasOneUse())
    return false;
  if (auto d = binaryOf(v, BinaryKind::div))
    return d.getLhs() == x && isConstantNear(d.getRhs(), std::sqrt(2.0));
  if (auto m = binaryOf(v, BinaryKind::mul))
    return otherOperand(m, x) && isConstantNear(otherOperand(m, x), 1.0 / std::sqrt(2.0));
  return false;
}

/// `v` is x³: pow(x, 3) or x * x * x (one user).
bool isCube(Value v, Value x) {
  if (!v.hasOneUse())
    return false;
  if (auto p = binaryOf(v, BinaryKind::pow))
    return p.getLhs() == x && isConstantNear(p.getRhs(), 3.0, 0.0);
  SmallVector<Value> f;
  SmallVector<Operation *> muls;
  return flattenProduct(v, f, muls, 3) && f.size() == 3 && llvm::all_of(f, [&](Value y) { return y == x; });
}

/// `v` is √(2/π) · (x + 0.044715 · x³) (one user, any order).
bool isTanhArgument(Value v, Value x) {
  SmallVector<Value> f;
  SmallVector<Operation *> muls;
  if (!v.hasOneUse() || !flattenProduct(v, f, muls, 2) || f.size() != 2)
    return false;
  for (int i = 0; i < 2; ++i) {
    if (!isConstantNear(f[i], std::sqrt(2.0 / M_PI)))
      continue;
    // x + 0.044715·x³: an enc.binary<add>, or enc.add when both are tensors of one shape.
    Value sum = f[1 - i], cubic;
    if (!sum.hasOneUse())
      return false;
    if (auto add = binaryOf(sum, BinaryKind::add))
      cubic = otherOperand(add, x);
    else if (auto add = sum.getDefiningOp<AddOp>())
      cubic = add.getLhs() == x ? add.getRhs() : add.getRhs() == x ? add.getLhs() : Value();
    SmallVector<Value> g;
    SmallVector<Operation *> inner;
    if (!cubic || !cubic.hasOneUse() || !flattenProduct(cubic, g, inner, 4))
      return false;
    // 0.044715 · x³ with x³ one factor (pow, or a product opened into x, x, x).
    int xs = 0, coef = 0, cubes = 0;
    for (Value y : g) {
      if (y == x)
        ++xs;
      else if (isConstantNear(y, 0.044715))
        ++coef;
      else if (isCube(y, x))
        ++cubes;
      else
        return false;
    }
    return coef == 1 && ((xs == 3 && cubes == 0) || (xs == 0 && cubes == 1));
  }
  return false;
}

/// Matched from the outermost multiplication: the factors are x, 0.5 and
/// (1 + erf(..)) / (1 + tanh(..)).
struct GeluFromProduct : OpRewritePattern<BinaryOp> {
  GeluFromProduct(MLIRContext *ctx, unsigned &count) : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(BinaryOp root, PatternRewriter &rewriter) const override {
    if (root.getKind() != BinaryKind::mul)
      return failure();
    // An inner product of the form (two factors) fails here and the outer
    // one matches; a GELU that feeds another product still matches alone.
    SmallVector<Value> f;
    SmallVector<Operation *> muls;
    if (!flattenProduct(root.getResult(), f, muls, 3) || f.size() != 3)
      return failure();
    // 0.5, (1 + f(..)) and x, in any order; x is what is left.
    int half = -1, onePlus = -1;
    Value fn;
    for (int i = 0; i < 3; ++i) {
      if (half < 0 && isConstantNear(f[i], 0.5)) {
        half = i;
        continue;
      }
      auto add = binaryOf(f[i], BinaryKind::add);
      if (onePlus >= 0 || !add || !add->hasOneUse())
        continue;
      for (auto [a, b] : {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())})
        if (isConstantNear(b, 1.0) && a.hasOneUse() && (unaryOf(a, UnaryKind::erf) || unaryOf(a, UnaryKind::tanh))) {
          fn = a;
          onePlus = i;
          break;
        }
    }
    if (half < 0 || onePlus < 0)
      return rewriter.notifyMatchFailure(root, "not 0.5 * x * (1 + erf|tanh(..))");
    Value x = f[3 - half - onePlus];
    if (x.getType() != root.getType())
      return failure();
    GeluApproximation approx;
    if (auto erf = unaryOf(fn, UnaryKind::erf); erf && isXOverSqrt2(erf.getX(), x))
      approx = GeluApproximation::none;
    else if (auto tanh = unaryOf(fn, UnaryKind::tanh); tanh && isTanhArgument(tanh.getX(), x))
      approx = GeluApproximation::tanh;
    else
      return rewriter.notifyMatchFailure(root, "neither erf(x/√2) nor tanh(√(2/π)(x + 0.044715x³))");
    rewriter.replaceOpWithNewOp<GeluOp>(root, root.getType(), x, approx);
    ++count;
    return success();
  }

  unsigned &count;
};

struct RecognizeGeluPass : enc::impl::RecognizeGeluPassBase<RecognizeGeluPass>, PassCounters {
  void runOnOperation() override {
    unsigned count = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<GeluFromProduct>(&getContext(), count);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numRecognized += count;
    recordCounts({{"num-recognized", count}});
  }
};

} // namespace
