//===- Decompose.cpp - fused ops -> the unfused op sequence ---------------===//
//
// The HF frontend emits what a model means (enc.attention); this pass spells
// it as the ops an exporter writes (split heads, Q x K^T, scale, mask,
// softmax, x V, merge heads), which is what encc report's baseline and
// --pipeline=none run and what the recognition passes fuse back.
//
//===----------------------------------------------------------------------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::enc {
#define GEN_PASS_DEF_DECOMPOSEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// Why `op` has no unfused spelling in the op set, or null.
const char *whyKeptFused(AttentionOp op) {
  if (op.getWindow())
    return "a sliding window (enc.mask masks padding only)";
  if (op.getCausal())
    return "a causal mask (enc.mask masks padding only)";
  if (op.getAlibi())
    return "ALiBi (no op adds a distance bias)";
  if (op.getNumKvHeads())
    return "grouped key/value heads (enc.split_heads splits one head count)";
  if (op.getBf16Pv() || op.getBf16Amx() || !cast<RankedTensorType>(op.getType()).getElementType().isF32())
    return "bf16 arithmetic (set by the precision passes, which run later)";
  return nullptr;
}

/// attention(q, k, v) / attention(qkv) -> merge_heads(matmul(softmax(mask(
/// [relative_position_bias](scale(matmul(split_heads(q), split_heads(k))
/// {transpose_b})))), split_heads(v))).
struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  DecomposeAttention(MLIRContext *ctx, unsigned &decomposed, unsigned &kept)
      : OpRewritePattern(ctx), decomposed(decomposed), kept(kept) {}

  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    if (const char *why = whyKeptFused(op)) {
      ++kept;
      return rewriter.notifyMatchFailure(op, why);
    }
    Location loc = op.getLoc();
    auto resultTy = cast<RankedTensorType>(op.getType());
    SmallVector<Value, 3> qkv(op.getInputs());
    if (qkv.size() == 1)
      qkv = SmallVector<Value, 3>(
          rewriter.create<SplitOp>(loc, SmallVector<Type, 3>(3, resultTy), qkv[0], rewriter.getI64IntegerAttr(3))
              .getOutputs());
    const int64_t heads = op.getNumHeads(), width = resultTy.getDimSize(2);
    const int64_t batch = resultTy.getDimSize(0), seq = resultTy.getDimSize(1);
    Type f32 = rewriter.getF32Type();
    auto headsTy = RankedTensorType::get({batch, heads, seq, width / heads}, f32);
    auto scoresTy = RankedTensorType::get({batch, heads, seq, seq}, f32);
    auto split = [&](Value x) { return rewriter.create<SplitHeadsOp>(loc, headsTy, x, uint64_t(heads)); };
    Value q = split(qkv[0]), k = split(qkv[1]), v = split(qkv[2]);
    Value s = rewriter.create<MatmulOp>(loc, scoresTy, q, k, /*transpose_b=*/true);
    s = rewriter.create<ScaleOp>(loc, scoresTy, s, op.getScaleAttr());
    if (Value table = op.getPositionBias())
      s = rewriter.create<RelativePositionBiasOp>(loc, scoresTy, s, table, op.getMaxDistanceAttr());
    s = rewriter.create<MaskOp>(loc, scoresTy, s, op.getLengths(), op.getPaddingAttr());
    s = rewriter.create<SoftmaxOp>(loc, scoresTy, s);
    Value ctx = rewriter.create<MatmulOp>(loc, headsTy, s, v, /*transpose_b=*/false);
    rewriter.replaceOpWithNewOp<MergeHeadsOp>(op, resultTy, ctx);
    ++decomposed;
    return success();
  }

  unsigned &decomposed, &kept;
};

struct DecomposePass : enc::impl::DecomposePassBase<DecomposePass>, PassCounters {
  void runOnOperation() override {
    unsigned decomposed = 0, kept = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeAttention>(&getContext(), decomposed, kept);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // The greedy driver may try an op that stays fused more than once.
    kept = 0;
    getOperation()->walk([&](AttentionOp op) { kept += whyKeptFused(op) != nullptr; });
    numDecomposed += decomposed;
    numKept += kept;
    recordCounts({{"num-decomposed", decomposed}, {"num-kept", kept}});
  }
};

} // namespace
