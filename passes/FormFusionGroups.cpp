//===- FormFusionGroups.cpp - producer + consumer chains -> enc.fusion ----===//
//
// The last pass before codegen: the chains a backend computes with one kernel
// become enc.fusion groups, so the IR (--emit=mlir, lit tests) says which ops
// share a step instead of each code generator deciding it on its own.
//
//===----------------------------------------------------------------------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "passes/PassCounters.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::enc {
#define GEN_PASS_DEF_FORMFUSIONGROUPSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// The first op in block order that converts `v` (enc.quantize / enc.to_bf16
/// of it), or null.
Operation *firstConversionOf(Value v) {
  Operation *first = nullptr;
  for (Operation *user : v.getUsers())
    if ((isa<QuantizeOp>(user) && cast<QuantizeOp>(user).getX() == v) ||
        (isa<ToBf16Op>(user) && cast<ToBf16Op>(user).getX() == v))
      if (user->getBlock() == v.getParentBlock() && (!first || user->isBeforeInBlock(first)))
        first = user;
  return first;
}

/// The only user of `op`'s single result when it is a `Consumer` reading it
/// as its first operand, or null.
template <typename Consumer> Operation *onlyConsumer(Operation *op) {
  Value r = op->getResult(0);
  if (!r.hasOneUse())
    return nullptr;
  Operation *user = *r.user_begin();
  return isa<Consumer>(user) && user->getOperand(0) == r ? user : nullptr;
}

/// The chain of ops that starts at `head` and one kernel may compute, head
/// first; a single op when there is none.
SmallVector<Operation *> chainFrom(Operation *head) {
  SmallVector<Operation *> chain = {head};
  if (isa<EmbeddingOp>(head)) {
    Operation *ln = onlyConsumer<LayerNormOp>(head);
    if (!ln)
      return chain;
    chain.push_back(ln);
    head = ln;
  }
  if (isa<LayerNormOp, AddLayerNormOp>(head)) {
    if (Operation *conversion = firstConversionOf(head->getResult(0)))
      chain.push_back(conversion);
  } else if (isa<QLinearOp>(head)) {
    // Only when the float result has no other user: the group's kernel
    // then never stores it (the quantised rows, or the LayerNorm's rows and
    // their conversion, are what leaves).
    if (Operation *quantize = onlyConsumer<QuantizeOp>(head)) {
      chain.push_back(quantize);
    } else if (Operation *ln = onlyConsumer<AddLayerNormOp>(head)) {
      chain.push_back(ln);
      if (Operation *conversion = firstConversionOf(ln->getResult(0)))
        chain.push_back(conversion);
    }
  } else if (isa<PoolOp>(head)) {
    if (Operation *norm = onlyConsumer<L2NormOp>(head))
      chain.push_back(norm);
  }
  return chain;
}

/// Makes the enc.fusion of `chain` at the place of its head. False (nothing
/// changed) when an operand of a later op is defined after the head by
/// something other than an enc.weight (weights are moved up).
bool formGroup(ArrayRef<Operation *> chain) {
  Operation *head = chain.front();
  llvm::SmallPtrSet<Operation *, 4> members(chain.begin(), chain.end());
  SmallVector<Operation *> weightsToHoist;
  for (Operation *op : chain.drop_front())
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || members.contains(def) || def->getBlock() != head->getBlock() || def->isBeforeInBlock(head))
        continue;
      if (!isa<WeightOp>(def))
        return false;
      weightsToHoist.push_back(def);
    }
  for (Operation *w : weightsToHoist)
    w->moveBefore(head);

  // The values used after the group, in op and result order.
  SmallVector<Value> yielded;
  for (Operation *op : chain)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !members.contains(u); }))
        yielded.push_back(r);

  OpBuilder b(head);
  auto group = b.create<FusionOp>(head->getLoc(), ValueRange(yielded).getTypes());
  Block *body = b.createBlock(&group.getBody());
  b.setInsertionPointToEnd(body);
  auto yield = b.create<YieldOp>(head->getLoc(), yielded);
  for (auto [i, v] : llvm::enumerate(yielded))
    v.replaceUsesWithIf(group.getResult(i), [&](OpOperand &use) {
      return use.getOwner() != yield && !members.contains(use.getOwner());
    });
  for (Operation *op : chain)
    op->moveBefore(yield);
  return true;
}

struct FormFusionGroupsPass : enc::impl::FormFusionGroupsPassBase<FormFusionGroupsPass>, PassCounters {
  void runOnOperation() override {
    unsigned groups = 0, ops = 0;
    SmallVector<Operation *> heads;
    getOperation()->walk([&](Operation *op) {
      if (isa<EmbeddingOp, LayerNormOp, AddLayerNormOp, QLinearOp, PoolOp>(op) && !op->getParentOfType<FusionOp>())
        heads.push_back(op);
    });
    llvm::SmallPtrSet<Operation *, 16> grouped;
    for (Operation *head : heads) {
      if (grouped.contains(head))
        continue; // the layernorm of an embedding's group
      SmallVector<Operation *> chain = chainFrom(head);
      if (chain.size() < 2 || !formGroup(chain))
        continue;
      grouped.insert(chain.begin(), chain.end());
      ++groups;
      ops += chain.size();
    }
    numGroups += groups;
    numGroupedOps += ops;
    recordCounts({{"num-groups", groups}, {"num-grouped-ops", ops}});
  }
};

} // namespace
