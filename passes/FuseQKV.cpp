//===- FuseQKV.cpp - three Linears on one input -> one Linear + split -----===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "ir/WeightStore.h"
#include "passes/ApplyFusionPatterns.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::enc {
#define GEN_PASS_DEF_FUSEQKVPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// A Linear that may take part in a merge: no epilogue, `enc.weight` weight
/// and (optional) `enc.weight` bias.
struct Candidate {
  LinearOp op;
  WeightOp weight;
  WeightOp bias; ///< null when the Linear has no bias
};

std::optional<Candidate> asCandidate(LinearOp op) {
  if (op.getEpilogue() != Epilogue::none)
    return std::nullopt;
  auto w = op.getWeight().getDefiningOp<WeightOp>();
  if (!w)
    return std::nullopt;
  WeightOp b;
  if (Value bias = op.getBias()) {
    b = bias.getDefiningOp<WeightOp>();
    if (!b)
      return std::nullopt;
  }
  return Candidate{op, w, b};
}

/// The role an attention block gives the Linear's result: 0 (queries: the
/// left operand of Q x K^T), 1 (keys: its right operand) or 2 (values: the
/// right operand of probs x V), each through one single-use split_heads, or
/// the input of that index of an enc.attention on q, k, v; -1 when the
/// result is not used that way.
int attentionRole(LinearOp op) {
  Value y = op.getResult();
  if (!y.hasOneUse())
    return -1;
  if (auto attn = dyn_cast<AttentionOp>(*y.getUsers().begin())) {
    auto in = attn.getInputs();
    if (in.size() != 3 || attn.getNumKvHeads())
      return -1;
    for (int i = 0; i < 3; ++i)
      if (in[i] == y)
        return i;
    return -1;
  }
  auto heads = dyn_cast<SplitHeadsOp>(*y.getUsers().begin());
  if (!heads || !heads.getResult().hasOneUse())
    return -1;
  auto mm = dyn_cast<MatmulOp>(*heads.getResult().getUsers().begin());
  if (!mm)
    return -1;
  if (mm.getA() == heads.getResult())
    return mm.getTransposeB() ? 0 : -1;
  return mm.getTransposeB() ? 1 : 2;
}

/// Writes the concatenation (along dim 0) of `parts` into `store` as `name`
/// unless present (deferred: the rows are copied as the artifact is written).
/// Fails when a part is missing or not a float tensor of `partShape`.
LogicalResult concatIntoStore(WeightStore &store, const std::string &name,
                              ArrayRef<WeightOp> parts,
                              ArrayRef<int64_t> partShape, bool &created) {
  created = false;
  if (store.find(name))
    return success();
  std::vector<WeightTensor> tensors;
  for (WeightOp p : parts) {
    const WeightTensor *t = store.find(p.getName().str());
    if (!t || !isStoredFloat(t->type) ||
        t->shape != std::vector<int64_t>(partShape.begin(), partShape.end()))
      return failure();
    tensors.push_back(*t);
  }
  store.set(name, WeightTensor::concatRows(std::move(tensors)));
  created = true;
  return success();
}

/// linear(x, wq, bq), linear(x, wk, bk), linear(x, wv, bv)
///   -> split(linear(x, wq+wk+wv, bq+bk+bv), parts = 3).
struct MergeLinears : OpRewritePattern<LinearOp> {
  MergeLinears(MLIRContext *ctx, WeightStore *store, unsigned &fused,
               unsigned &created)
      : OpRewritePattern(ctx), store(store), fused(fused), created(created) {}

  LogicalResult matchAndRewrite(LinearOp root,
                                PatternRewriter &rewriter) const override {
    auto rootCand = asCandidate(root);
    if (!rootCand)
      return rewriter.notifyMatchFailure(root, "not a mergeable linear");
    Value x = root.getX();
    Block *block = root->getBlock();
    Type resultType = root.getType();
    Type weightType = root.getWeight().getType();
    bool hasBias = static_cast<bool>(rootCand->bias);

    // The Linears reading `x` like `root` does, in program order.
    SmallVector<Candidate, 3> group;
    for (Operation *user : x.getUsers()) {
      auto lin = dyn_cast<LinearOp>(user);
      if (!lin || lin.getX() != x || lin->getBlock() != block ||
          lin.getType() != resultType ||
          lin.getWeight().getType() != weightType)
        continue;
      auto cand = asCandidate(lin);
      if (!cand || static_cast<bool>(cand->bias) != hasBias)
        continue;
      if (llvm::any_of(group, [&](const Candidate &c) { return c.op == lin; }))
        continue;
      group.push_back(*cand);
    }
    if (group.size() < 3)
      return rewriter.notifyMatchFailure(root, "fewer than three linears");
    llvm::sort(group, [](const Candidate &a, const Candidate &b) {
      return a.op->isBeforeInBlock(b.op);
    });
    group.resize(3);
    Operation *first = group[0].op; // where the merged Linear goes
    // Q, K, V in that order when an attention block says which is which (an
    // exporter may write them in any order), so that fuse-attention sees the
    // packed layout; program order otherwise.
    int roles[3] = {attentionRole(group[0].op), attentionRole(group[1].op),
                    attentionRole(group[2].op)};
    if (llvm::all_of(roles, [](int r) { return r >= 0; }) &&
        (1 << roles[0] | 1 << roles[1] | 1 << roles[2]) == 7) {
      SmallVector<Candidate, 3> byRole(3, group[0]);
      for (int i = 0; i < 3; ++i)
        byRole[roles[i]] = group[i];
      group = byRole;
    }
    if (!llvm::is_contained(
            llvm::map_range(group, [](const Candidate &c) { return c.op; }),
            root))
      return rewriter.notifyMatchFailure(root, "not among the first three");

    auto wType = cast<RankedTensorType>(weightType);
    int64_t n = wType.getDimSize(0), kDim = wType.getDimSize(1);
    std::string wName =
        (group[0].weight.getName() + "+" + group[1].weight.getName() + "+" +
         group[2].weight.getName())
            .str();
    std::string bName;
    if (hasBias)
      bName = (group[0].bias.getName() + "+" + group[1].bias.getName() + "+" +
               group[2].bias.getName())
                  .str();
    if (store) {
      bool madeW = false, madeB = false;
      if (failed(concatIntoStore(
              *store, wName,
              {group[0].weight, group[1].weight, group[2].weight}, {n, kDim},
              madeW)))
        return rewriter.notifyMatchFailure(root, "weights not in the store");
      if (hasBias &&
          failed(concatIntoStore(*store, bName,
                                 {group[0].bias, group[1].bias, group[2].bias},
                                 {n}, madeB)))
        return rewriter.notifyMatchFailure(root, "biases not in the store");
      created += unsigned(madeW) + unsigned(madeB);
    }

    Location loc = rewriter.getFusedLoc(
        {group[0].op.getLoc(), group[1].op.getLoc(), group[2].op.getLoc()});
    rewriter.setInsertionPoint(first);
    Type f32 = rewriter.getF32Type();
    Value w = rewriter.create<WeightOp>(
        loc, RankedTensorType::get({3 * n, kDim}, f32), wName);
    Value b;
    if (hasBias)
      b = rewriter.create<WeightOp>(loc, RankedTensorType::get({3 * n}, f32),
                                    bName);
    auto rType = cast<RankedTensorType>(resultType);
    SmallVector<int64_t> qkvShape(rType.getShape());
    qkvShape.back() = 3 * n;
    Value qkv =
        rewriter.create<LinearOp>(loc, RankedTensorType::get(qkvShape, f32), x,
                                  w, b, Epilogue::none);
    auto split =
        rewriter.create<SplitOp>(loc, SmallVector<Type, 3>(3, resultType), qkv,
                                 rewriter.getI64IntegerAttr(3));
    for (int i = 0; i < 3; ++i)
      rewriter.replaceOp(group[i].op, split.getOutputs()[i]);
    ++fused;
    return success();
  }

  WeightStore *store;
  unsigned &fused;
  unsigned &created;
};

struct FuseQKVPass : enc::impl::FuseQKVPassBase<FuseQKVPass>, PassCounters {
  /// Where the merged weights go; null (enc-opt, lit): the IR changes only.
  WeightStore *store = nullptr;

  void runOnOperation() override {
    unsigned fused = 0, created = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<MergeLinears>(&getContext(), store, fused, created);
    if (failed(applyFusionPatterns(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numFused += fused;
    numWeightsCreated += created;
    recordCounts({{"num-fused", fused}, {"num-weights-created", created}});
  }
};

} // namespace

std::unique_ptr<Pass> mlir::enc::createFuseQKVPass(WeightStore *weights) {
  auto pass = std::make_unique<FuseQKVPass>();
  pass->store = weights;
  return pass;
}
