//===- FuseResidualLayerNorm.cpp - layernorm(add) -> add_layernorm --------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::enc {
#define GEN_PASS_DEF_FUSERESIDUALLAYERNORMPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// layernorm(add(a, b), g, beta) -> add_layernorm(a, b, g, beta).
struct FuseAddIntoLayerNorm : OpRewritePattern<LayerNormOp> {
  FuseAddIntoLayerNorm(MLIRContext *ctx, unsigned &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(LayerNormOp ln,
                                PatternRewriter &rewriter) const override {
    auto add = ln.getX().getDefiningOp<AddOp>();
    if (!add)
      return rewriter.notifyMatchFailure(ln, "not fed by an add");
    if (!add.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(ln, "add has other users");
    rewriter.replaceOpWithNewOp<AddLayerNormOp>(
        ln, ln.getType(), add.getLhs(), add.getRhs(), ln.getGamma(),
        ln.getBeta(), ln.getEpsilonAttr());
    ++count;
    return success();
  }

  unsigned &count;
};

struct FuseResidualLayerNormPass
    : enc::impl::FuseResidualLayerNormPassBase<FuseResidualLayerNormPass>,
      PassCounters {
  void runOnOperation() override {
    unsigned count = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAddIntoLayerNorm>(&getContext(), count);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numFused += count;
    recordCounts({{"num-fused", count}});
  }
};

} // namespace
