//===- LowerScalarArithmetic.cpp - x * c -> scale, x / c -> div, tanh -----===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/ArithmeticMatchers.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mlir::enc {
#define GEN_PASS_DEF_LOWERSCALARARITHMETICPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

struct ScalarBinary : OpRewritePattern<BinaryOp> {
  ScalarBinary(MLIRContext *ctx, unsigned &count) : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(BinaryOp op, PatternRewriter &rewriter) const override {
    if (op.getKind() == BinaryKind::mul) {
      for (auto [x, c] : {std::pair(op.getLhs(), op.getRhs()), std::pair(op.getRhs(), op.getLhs())})
        if (auto f = scalarConstant(c); f && x.getType() == op.getType()) {
          rewriter.replaceOpWithNewOp<ScaleOp>(op, op.getType(), x, rewriter.getF32FloatAttr(*f));
          ++count;
          return success();
        }
    } else if (op.getKind() == BinaryKind::div) {
      auto d = scalarConstant(op.getRhs());
      if (d && *d != 0.0f && std::isfinite(*d) && op.getLhs().getType() == op.getType()) {
        rewriter.replaceOpWithNewOp<DivOp>(op, op.getType(), op.getLhs(), rewriter.getF32FloatAttr(*d));
        ++count;
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "not x * c or x / c with a scalar constant c");
  }

  unsigned &count;
};

struct UnaryTanh : OpRewritePattern<UnaryOp> {
  UnaryTanh(MLIRContext *ctx, unsigned &count) : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(UnaryOp op, PatternRewriter &rewriter) const override {
    if (op.getKind() != UnaryKind::tanh)
      return failure();
    rewriter.replaceOpWithNewOp<TanhOp>(op, op.getType(), op.getX());
    ++count;
    return success();
  }

  unsigned &count;
};

struct LowerScalarArithmeticPass : enc::impl::LowerScalarArithmeticPassBase<LowerScalarArithmeticPass>,
                                   PassCounters {
  void runOnOperation() override {
    unsigned count = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<ScalarBinary, UnaryTanh>(&getContext(), count);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numLowered += count;
    recordCounts({{"num-lowered", count}});
  }
};

} // namespace
