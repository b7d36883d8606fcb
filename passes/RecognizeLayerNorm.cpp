//===- RecognizeLayerNorm.cpp - decomposed LayerNorm -> enc.layernorm -----===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/ArithmeticMatchers.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::enc {
#define GEN_PASS_DEF_RECOGNIZELAYERNORMPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// An enc.weight vector of `h` elements.
bool isWeightVector(Value v, int64_t h) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return v.getDefiningOp<WeightOp>() && t && t.getRank() == 1 && t.getDimSize(0) == h;
}

/// Matched from the final `+ beta`.
struct LayerNormFromParts : OpRewritePattern<BinaryOp> {
  LayerNormFromParts(MLIRContext *ctx, unsigned &count) : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(BinaryOp addBeta, PatternRewriter &rewriter) const override {
    if (addBeta.getKind() != BinaryKind::add)
      return failure();
    auto type = cast<RankedTensorType>(addBeta.getType());
    if (type.getRank() < 1 || ShapedType::isDynamic(type.getShape().back()))
      return failure();
    const int64_t h = type.getShape().back();
    // (n * gamma) + beta, either order.
    BinaryOp mulGamma;
    Value beta;
    for (auto [a, b] : {std::pair(addBeta.getLhs(), addBeta.getRhs()), std::pair(addBeta.getRhs(), addBeta.getLhs())})
      if (auto m = binaryOf(a, BinaryKind::mul); m && isWeightVector(b, h)) {
        mulGamma = m;
        beta = b;
        break;
      }
    if (!mulGamma || !mulGamma->hasOneUse())
      return rewriter.notifyMatchFailure(addBeta, "not (x * gamma) + beta");
    BinaryOp div;
    Value gamma;
    for (auto [a, b] : {std::pair(mulGamma.getLhs(), mulGamma.getRhs()), std::pair(mulGamma.getRhs(), mulGamma.getLhs())})
      if (auto d = binaryOf(a, BinaryKind::div); d && isWeightVector(b, h)) {
        div = d;
        gamma = b;
        break;
      }
    if (!div || !div->hasOneUse())
      return rewriter.notifyMatchFailure(addBeta, "not (d / s) * gamma");
    // d = x - mean(x); s = sqrt(mean(d^2) + eps)
    auto sub = binaryOf(div.getLhs(), BinaryKind::sub);
    auto sqrt = unaryOf(div.getRhs(), UnaryKind::sqrt);
    if (!sub || !sqrt || !sqrt->hasOneUse())
      return rewriter.notifyMatchFailure(addBeta, "not (x - mean) / sqrt(..)");
    Value x = sub.getLhs();
    auto mean = sub.getRhs().getDefiningOp<ReduceMeanOp>();
    if (!mean || mean.getX() != x || !mean->hasOneUse() || x.getType() != addBeta.getType())
      return rewriter.notifyMatchFailure(addBeta, "the centring is not x - reduce_mean(x)");
    auto addEps = binaryOf(sqrt.getX(), BinaryKind::add);
    if (!addEps || !addEps->hasOneUse())
      return failure();
    ReduceMeanOp var;
    std::optional<float> eps;
    for (auto [a, b] : {std::pair(addEps.getLhs(), addEps.getRhs()), std::pair(addEps.getRhs(), addEps.getLhs())})
      if (auto r = a.getDefiningOp<ReduceMeanOp>(); r && (eps = scalarConstant(b))) {
        var = r;
        break;
      }
    if (!var || !var->hasOneUse() || !eps || !(*eps > 0.0f))
      return rewriter.notifyMatchFailure(addBeta, "the variance is not reduce_mean(..) + eps (eps > 0)");
    Operation *square = var.getX().getDefiningOp();
    auto pow = binaryOf(var.getX(), BinaryKind::pow);
    auto mulSq = binaryOf(var.getX(), BinaryKind::mul);
    const bool squares = (pow && pow.getLhs() == sub.getResult() && isConstantNear(pow.getRhs(), 2.0, 0.0)) ||
                         (mulSq && mulSq.getLhs() == sub.getResult() && mulSq.getRhs() == sub.getResult());
    if (!squares || !square->hasOneUse())
      return rewriter.notifyMatchFailure(addBeta, "the variance does not square x - mean");
    // d feeds exactly the square and the division.
    for (Operation *user : sub->getUsers())
      if (user != square && user != div.getOperation())
        return rewriter.notifyMatchFailure(addBeta, "x - mean has another user");
    rewriter.replaceOpWithNewOp<LayerNormOp>(addBeta, addBeta.getType(), x, gamma, beta,
                                             rewriter.getF32FloatAttr(*eps));
    ++count;
    return success();
  }

  unsigned &count;
};

struct RecognizeLayerNormPass : enc::impl::RecognizeLayerNormPassBase<RecognizeLayerNormPass>, PassCounters {
  void runOnOperation() override {
    unsigned count = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<LayerNormFromParts>(&getContext(), count);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numRecognized += count;
    recordCounts({{"num-recognized", count}});
  }
};

} // namespace
