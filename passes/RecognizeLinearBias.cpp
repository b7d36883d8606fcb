//===- RecognizeLinearBias.cpp - linear(x, w) + b -> linear(x, w, b) ------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/ArithmeticMatchers.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::enc {
#define GEN_PASS_DEF_RECOGNIZELINEARBIASPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

struct BiasIntoLinear : OpRewritePattern<BinaryOp> {
  BiasIntoLinear(MLIRContext *ctx, unsigned &count) : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(BinaryOp add, PatternRewriter &rewriter) const override {
    if (add.getKind() != BinaryKind::add)
      return failure();
    for (auto [a, b] : {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())}) {
      auto linear = a.getDefiningOp<LinearOp>();
      if (!linear || linear.getBias() || linear.getEpilogue() != Epilogue::none || !linear->hasOneUse() ||
          linear.getType() != add.getType() || !b.getDefiningOp<WeightOp>())
        continue;
      auto bt = cast<RankedTensorType>(b.getType());
      auto wt = cast<RankedTensorType>(linear.getWeight().getType());
      if (bt.getRank() != 1 || !bt.getElementType().isF32() || bt.getDimSize(0) != wt.getDimSize(0))
        continue;
      rewriter.replaceOpWithNewOp<LinearOp>(add, add.getType(), linear.getX(), linear.getWeight(), b,
                                            Epilogue::none);
      ++count;
      return success();
    }
    return rewriter.notifyMatchFailure(add, "not linear(x, w) + bias vector");
  }

  unsigned &count;
};

struct RecognizeLinearBiasPass : enc::impl::RecognizeLinearBiasPassBase<RecognizeLinearBiasPass>, PassCounters {
  void runOnOperation() override {
    unsigned count = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<BiasIntoLinear>(&getContext(), count);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numRecognized += count;
    recordCounts({{"num-recognized", count}});
  }
};

} // namespace
