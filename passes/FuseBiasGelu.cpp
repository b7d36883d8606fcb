//===- FuseBiasGelu.cpp - gelu(linear) -> linear {epilogue} ---------------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::enc {
#define GEN_PASS_DEF_FUSEBIASGELUPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// gelu(linear(x, w, b) {epilogue = #enc.epilogue<none>}) -> linear(x, w, b) {epilogue}.
struct FuseGeluIntoLinear : OpRewritePattern<GeluOp> {
  FuseGeluIntoLinear(MLIRContext *ctx, unsigned &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(GeluOp gelu,
                                PatternRewriter &rewriter) const override {
    auto linear = gelu.getX().getDefiningOp<LinearOp>();
    if (!linear || linear.getEpilogue() != Epilogue::none)
      return rewriter.notifyMatchFailure(gelu, "not fed by a plain linear");
    if (!linear.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(gelu, "linear has other users");
    const Epilogue epilogue = gelu.getApproximate() == GeluApproximation::tanh
                                  ? Epilogue::gelu_tanh
                                  : Epilogue::gelu;
    rewriter.replaceOpWithNewOp<LinearOp>(gelu, gelu.getType(), linear.getX(),
                                          linear.getWeight(), linear.getBias(),
                                          epilogue);
    ++count;
    return success();
  }

  unsigned &count;
};

struct FuseBiasGeluPass : enc::impl::FuseBiasGeluPassBase<FuseBiasGeluPass>,
                          PassCounters {
  void runOnOperation() override {
    unsigned count = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseGeluIntoLinear>(&getContext(), count);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numFused += count;
    recordCounts({{"num-fused", count}});
  }
};

} // namespace
