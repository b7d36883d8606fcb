//===- FuseAttention.cpp - split heads .. merge heads -> attention --------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/PackedQkv.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>

namespace mlir::enc {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// The single-use `enc.split_heads` producing `v`, or null.
SplitHeadsOp splitHeadsOf(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  return v.getDefiningOp<SplitHeadsOp>();
}

bool compatibleShapes(Type a, Type b) {
  auto ta = cast<RankedTensorType>(a), tb = cast<RankedTensorType>(b);
  if (ta.getRank() != tb.getRank())
    return false;
  for (int64_t i = 0; i < ta.getRank(); ++i) {
    int64_t x = ta.getDimSize(i), y = tb.getDimSize(i);
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return false;
  }
  return true;
}

/// What turns the raw scores into probabilities, in the forms the frontends
/// and enc-fuse-scale-mask-softmax leave: scale_mask_softmax(scores), or
/// with MPNet's relative position bias
/// scale_mask_softmax{scale 1}(relative_position_bias(scale(scores))) /
/// softmax(mask(relative_position_bias(scale(scores)))), every link
/// single-use (the scale op is absent when its factor folded away as 1).
struct Probabilities {
  Value scores, lengths;
  FloatAttr scale;
  PaddingAttr padding;
  Value positionBias;      ///< the bias table, or null
  IntegerAttr maxDistance; ///< with positionBias
};

/// The single-use op of type OpTy producing `v`, or null.
template <typename OpTy> OpTy singleUseProducer(Value v) {
  return v.hasOneUse() ? v.getDefiningOp<OpTy>() : OpTy();
}

std::optional<Probabilities> matchProbabilities(Value probs) {
  Value biased, lengths;
  PaddingAttr padding;
  if (auto sms = singleUseProducer<ScaleMaskSoftmaxOp>(probs)) {
    if (!singleUseProducer<RelativePositionBiasOp>(sms.getScores()))
      return Probabilities{sms.getScores(), sms.getLengths(), sms.getScaleAttr(), sms.getPaddingAttr(), {}, {}};
    if (sms.getScale().convertToFloat() != 1.0f) // would scale the bias too
      return std::nullopt;
    biased = sms.getScores(), lengths = sms.getLengths(), padding = sms.getPaddingAttr();
  } else {
    auto softmax = singleUseProducer<SoftmaxOp>(probs);
    MaskOp mask = softmax ? singleUseProducer<MaskOp>(softmax.getX()) : MaskOp();
    if (!mask)
      return std::nullopt;
    biased = mask.getScores(), lengths = mask.getLengths(), padding = mask.getPaddingAttr();
  }
  auto bias = singleUseProducer<RelativePositionBiasOp>(biased);
  if (!bias)
    return std::nullopt;
  Value scores = bias.getScores();
  FloatAttr scale = FloatAttr::get(Float32Type::get(probs.getContext()), 1.0);
  if (auto s = singleUseProducer<ScaleOp>(scores))
    scores = s.getX(), scale = s.getFactorAttr();
  return Probabilities{scores, lengths, scale, padding, bias.getTable(), bias.getMaxDistanceAttr()};
}

/// merge_heads(matmul(probabilities(matmul(split_heads(q), split_heads(k))
/// {transpose_b}), split_heads(v))) -> attention(q, k, v) / attention(qkv),
/// with the probabilities of matchProbabilities.
struct FuseAttentionBlock : OpRewritePattern<MergeHeadsOp> {
  FuseAttentionBlock(MLIRContext *ctx, unsigned &fused, unsigned &packed)
      : OpRewritePattern(ctx), fused(fused), packed(packed) {}

  LogicalResult matchAndRewrite(MergeHeadsOp merge,
                                PatternRewriter &rewriter) const override {
    Value ctxh = merge.getX();
    auto pv = ctxh.getDefiningOp<MatmulOp>();
    if (!pv || pv.getTransposeB() || !ctxh.hasOneUse())
      return rewriter.notifyMatchFailure(merge, "not fed by probs x V");
    std::optional<Probabilities> probs = matchProbabilities(pv.getA());
    if (!probs)
      return rewriter.notifyMatchFailure(merge, "probs not a single-use scale_mask_softmax "
                                                "(with a relative_position_bias: after a scale)");
    auto qk = probs->scores.getDefiningOp<MatmulOp>();
    if (!qk || !qk.getTransposeB() || !probs->scores.hasOneUse())
      return rewriter.notifyMatchFailure(merge, "scores not a single-use "
                                                "Q x K^T");
    SplitHeadsOp sq = splitHeadsOf(qk.getA()), sk = splitHeadsOf(qk.getB()),
                 sv = splitHeadsOf(pv.getB());
    if (!sq || !sk || !sv)
      return rewriter.notifyMatchFailure(merge, "q, k or v not a single-use "
                                                "split_heads");
    // Self-attention only: q, k and v have one layout.
    if (sq == sk || sq == sv || sk == sv)
      return rewriter.notifyMatchFailure(merge, "shared split_heads");
    uint64_t heads = sq.getNumHeads();
    int64_t mergedHeads = cast<RankedTensorType>(ctxh.getType()).getDimSize(1);
    if (sk.getNumHeads() != heads || sv.getNumHeads() != heads ||
        (!ShapedType::isDynamic(mergedHeads) &&
         mergedHeads != static_cast<int64_t>(heads)))
      return rewriter.notifyMatchFailure(merge, "head counts differ");
    Value q = sq.getX(), k = sk.getX(), v = sv.getX();
    if (!compatibleShapes(q.getType(), k.getType()) ||
        !compatibleShapes(q.getType(), v.getType()))
      return rewriter.notifyMatchFailure(merge, "q, k, v shapes differ");

    SmallVector<Value, 3> inputs = {q, k, v};
    Value qkv = packedQkv(q, k, v);
    bool isPacked = static_cast<bool>(qkv);
    if (isPacked)
      inputs = {qkv};

    rewriter.replaceOpWithNewOp<AttentionOp>(
        merge, merge.getType(), inputs, probs->lengths, probs->positionBias,
        rewriter.getI64IntegerAttr(static_cast<int64_t>(heads)),
        probs->scale, probs->padding, /*bf16_pv=*/nullptr, /*bf16_amx=*/nullptr, probs->maxDistance, /*window=*/nullptr,
        /*causal=*/nullptr, /*num_kv_heads=*/nullptr, /*alibi=*/nullptr);
    ++fused;
    if (isPacked)
      ++packed;
    return success();
  }

  unsigned &fused;
  unsigned &packed;
};

/// attention(q, k, v) whose q, k, v are one split's three parts (a frontend's
/// attention after enc-fuse-qkv) -> attention(qkv), every attribute kept.
struct PackAttentionInputs : OpRewritePattern<AttentionOp> {
  PackAttentionInputs(MLIRContext *ctx, unsigned &packed) : OpRewritePattern(ctx), packed(packed) {}

  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    auto in = op.getInputs();
    if (in.size() != 3 || op.getNumKvHeads())
      return rewriter.notifyMatchFailure(op, "packed already, or grouped key/value heads");
    Value qkv = packedQkv(in[0], in[1], in[2]);
    if (!qkv)
      return rewriter.notifyMatchFailure(op, "q, k, v not one split's three parts");
    rewriter.modifyOpInPlace(op, [&] { op.getInputsMutable().assign(qkv); });
    ++packed;
    return success();
  }

  unsigned &packed;
};

struct FuseAttentionPass : enc::impl::FuseAttentionPassBase<FuseAttentionPass>,
                           PassCounters {
  void runOnOperation() override {
    unsigned fused = 0, packed = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAttentionBlock>(&getContext(), fused, packed);
    patterns.add<PackAttentionInputs>(&getContext(), packed);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numFused += fused;
    numPacked += packed;
    recordCounts({{"num-fused", fused}, {"num-packed", packed}});
  }
};

} // namespace
