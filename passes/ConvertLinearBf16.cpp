//===- ConvertLinearBf16.cpp - linear -> to_bf16 + bf16 linear ------------===//
//
// Weights: rounded to bf16 here at compile time (the rounding of toBf16Bits in
// enc_bf16.h, re-implemented so the pass does not pull in the kernels; the
// lit and e2e tests check the result). Activations: one enc.to_bf16 per
// distinct Linear input, placed right after its producer, or, where that
// producer is an enc.attention or a bf16 enc.linear with no other user, the
// producer's result made bf16 instead (its kernel rounds as it stores).
//
//===----------------------------------------------------------------------===//
#include "ir/EncDialect.h"
#include "ir/EncOps.h"
#include "ir/WeightStore.h"
#include "passes/PassCounters.h"
#include "passes/InsertAfterProducer.h"
#include "passes/Passes.h"
#include "passes/SkipPatterns.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>

namespace mlir::enc {
#define GEN_PASS_DEF_CONVERTLINEARBF16PASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

struct ConvertLinearBf16Pass
    : enc::impl::ConvertLinearBf16PassBase<ConvertLinearBf16Pass>,
      PassCounters {
  using ConvertLinearBf16PassBase::ConvertLinearBf16PassBase;

  void runOnOperation() override;

  /// Where the bf16 weights go (and the f32 ones are read from); null
  /// (enc-opt, lit): the IR changes only.
  WeightStore *store = nullptr;

private:
  /// The bf16 enc.weight replacing `w` (created once per weight op); null
  /// when a store is set but lacks an f32 [rows, cols] tensor named like `w`.
  Value convertWeight(WeightOp w);

  llvm::DenseMap<Operation *, Value> converted;
  unsigned weightsCreated = 0;
};

Value ConvertLinearBf16Pass::convertWeight(WeightOp w) {
  if (auto it = converted.find(w); it != converted.end())
    return it->second;
  auto type = cast<RankedTensorType>(w.getType());
  const int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  const std::string name = w.getName().str(), bName = name + ".bf16";
  if (store && !store->find(bName)) {
    const WeightTensor *src = store->find(name);
    // The f32 value of the IR's weight, as stored (f32, f16 or bf16).
    if (!src || !isStoredFloat(src->type) ||
        src->shape != std::vector<int64_t>{rows, cols})
      return converted[w] = Value(); // stays f32
    // A bf16 checkpoint's tensor is used as it is; others are rounded as the
    // artifact is written.
    store->set(bName, src->roundedTo(WeightType::BF16));
    ++weightsCreated;
  }
  OpBuilder b(w);
  return converted[w] = b.create<WeightOp>(
             w.getLoc(),
             RankedTensorType::get({rows, cols}, b.getBF16Type()), bName);
}

void ConvertLinearBf16Pass::runOnOperation() {
  converted.clear();
  weightsCreated = 0;
  SkipPatterns skipPatterns;
  if (failed(skipPatterns.parse(getOperation(), "enc-convert-linear-bf16", skip)))
    return signalPassFailure();

  unsigned nConverted = 0, nSkipped = 0, nRoundOps = 0;
  llvm::SetVector<Operation *> replacedWeights;
  // The bf16 replacement of `w` (which is then dead unless read elsewhere), or
  // null when a skip pattern keeps it f32 or the store lacks it.
  auto bf16Replacement = [&](WeightOp w) -> Value {
    if (skipPatterns.matches(w.getName())) {
      ++nSkipped;
      return Value();
    }
    Value bw = convertWeight(w);
    if (bw)
      replacedWeights.insert(w);
    return bw;
  };
  // Linears to rewrite, grouped by input (in program order of first use).
  llvm::MapVector<Value, SmallVector<std::pair<LinearOp, Value>>> byInput;
  getOperation()->walk([&](LinearOp op) {
    auto w = op.getWeight().getDefiningOp<WeightOp>();
    if (!w)
      return;
    auto t = cast<RankedTensorType>(w.getType());
    if (!t.getElementType().isF32() || t.getRank() != 2 ||
        t.getDimSize(1) % 2 != 0)
      return;
    if (Value bw = bf16Replacement(w))
      byInput[op.getX()].push_back({op, bw});
  });

  // With `embeddings`: the f32 word tables of enc.embedding become bf16 too
  // (the gather widens them exactly; the sum stays f32). A table tied to a
  // Linear (SPLADE's decoder) is the same bf16 tensor as that Linear's.
  unsigned nEmbeddings = 0;
  if (embeddings)
    getOperation()->walk([&](EmbeddingOp op) {
      auto w = op.getWord().getDefiningOp<WeightOp>();
      if (!w || op.getWordScale() || !cast<RankedTensorType>(w.getType()).getElementType().isF32())
        return;
      if (Value bw = bf16Replacement(w)) {
        op.getWordMutable().assign(bw);
        ++nEmbeddings;
      }
    });

  MLIRContext *ctx = &getContext();
  SmallVector<ToBf16Op> roundings;
  for (auto &[x, group] : byInput) {
    OpBuilder b(ctx);
    setInsertionPointAfterProducer<ToBf16Op>(b, x);
    auto xType = cast<RankedTensorType>(x.getType());
    auto rounded = b.create<ToBf16Op>(
        x.getLoc(), RankedTensorType::get(xType.getShape(), b.getBF16Type()), x);
    ++nRoundOps;
    roundings.push_back(rounded);
    for (auto &[op, bw] : group) {
      op.getXMutable().assign(rounded);
      op.getWeightMutable().assign(bw);
      ++nConverted;
    }
  }

  // A rounding of a value whose producer can write bf16 itself (an
  // enc.attention, a bf16 enc.linear: their kernels round as they store)
  // and that has no other user: folded into the producer, whose result
  // becomes bf16. The rounding is the same; the step writes half the bytes
  // and no separate rounding pass over them runs.
  unsigned nFolded = 0;
  for (ToBf16Op r : roundings) {
    Value x = r.getX();
    Operation *producer = x.getDefiningOp();
    auto linear = dyn_cast_or_null<LinearOp>(producer);
    if (!producer || !x.hasOneUse() ||
        !(isa<AttentionOp>(producer) || (linear && linear.getX().getType().getElementType().isBF16())))
      continue;
    x.setType(r.getResult().getType());
    r.getResult().replaceAllUsesWith(x);
    r.erase();
    ++nFolded;
  }

  for (Operation *w : replacedWeights)
    if (w->use_empty())
      w->erase();

  recordCounts({{"num-converted", nConverted},
                {"num-skipped", nSkipped},
                {"num-to-bf16-ops", nRoundOps - nFolded},
                {"num-folded-into-producers", nFolded},
                {"num-embeddings", nEmbeddings},
                {"num-weights-created", weightsCreated}});
}

} // namespace

std::unique_ptr<Pass> mlir::enc::createConvertLinearBf16Pass(
    const ConvertLinearBf16PassOptions &options, WeightStore *weights) {
  auto pass = std::make_unique<ConvertLinearBf16Pass>(options);
  pass->store = weights;
  return pass;
}
