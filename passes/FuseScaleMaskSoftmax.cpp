//===- FuseScaleMaskSoftmax.cpp - softmax(mask(scale)) -> one op ----------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::enc {
#define GEN_PASS_DEF_FUSESCALEMASKSOFTMAXPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// If `v` is produced by a single-use `enc.scale` or `enc.div`, returns its
/// input and multiplies `factor` by its factor (1/divisor); otherwise null.
Value peelScale(Value v, double &factor) {
  if (!v.hasOneUse())
    return nullptr;
  if (auto s = v.getDefiningOp<ScaleOp>()) {
    factor *= s.getFactor().convertToDouble();
    return s.getX();
  }
  if (auto d = v.getDefiningOp<DivOp>()) {
    factor /= d.getDivisor().convertToDouble();
    return d.getX();
  }
  return nullptr;
}

/// softmax(scale*(mask(scale*(s), len))) -> scale_mask_softmax(s, len).
struct FuseSoftmaxChain : OpRewritePattern<SoftmaxOp> {
  FuseSoftmaxChain(MLIRContext *ctx, unsigned &fused, unsigned &unscaled)
      : OpRewritePattern(ctx), fused(fused), unscaled(unscaled) {}

  LogicalResult matchAndRewrite(SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    // Scales applied after the mask (between mask and softmax).
    double after = 1.0;
    bool anyScale = false;
    Value v = softmax.getX();
    while (Value in = peelScale(v, after)) {
      v = in;
      anyScale = true;
    }
    auto mask = v.getDefiningOp<MaskOp>();
    if (!mask)
      return rewriter.notifyMatchFailure(softmax, "not fed by a mask");
    if (!mask.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(softmax, "mask has other users");
    // -inf * a must stay -inf.
    if (!(after > 0.0))
      return rewriter.notifyMatchFailure(softmax,
                                         "non-positive scale after the mask");
    // Scales applied before the mask.
    double before = 1.0;
    Value s = mask.getScores();
    while (Value in = peelScale(s, before)) {
      s = in;
      anyScale = true;
    }
    float scale = static_cast<float>(before * after);
    rewriter.replaceOpWithNewOp<ScaleMaskSoftmaxOp>(
        softmax, softmax.getType(), s, mask.getLengths(),
        rewriter.getF32FloatAttr(scale),
        mask.getPaddingAttr());
    ++fused;
    if (!anyScale)
      ++unscaled;
    return success();
  }

  unsigned &fused;
  unsigned &unscaled;
};

struct FuseScaleMaskSoftmaxPass
    : enc::impl::FuseScaleMaskSoftmaxPassBase<FuseScaleMaskSoftmaxPass>,
      PassCounters {
  void runOnOperation() override {
    unsigned fused = 0, unscaled = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseSoftmaxChain>(&getContext(), fused, unscaled);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numFused += fused;
    numUnscaled += unscaled;
    recordCounts({{"num-fused", fused}, {"num-unscaled", unscaled}});
  }
};

} // namespace
