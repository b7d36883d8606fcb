//===- QuantizeLinearInt8.cpp - linear -> quantize + qlinear --------------===//
//
// Weights: symmetric int8 per output channel, computed here at compile time
// (the formula of quantizeWeightsQ8 in enc_qgemm.h, re-implemented so the
// pass does not pull in the kernels; tests/passes checks they agree bit for
// bit). Activations: one enc.quantize (per token, dynamic unless calibrated)
// per distinct Linear input.
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
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

namespace mlir::enc {
#define GEN_PASS_DEF_QUANTIZELINEARINT8PASS
#include "passes/Passes.h.inc"
} // namespace mlir::enc

using namespace mlir;
using namespace mlir::enc;

namespace {

/// Largest K whose u8 x s8 sums cannot overflow int32 (kQ8MaxK).
constexpr int64_t kMaxK = 66311;

/// Symmetric per-row int8 quantisation of `w` [rows, cols]:
/// s = max|w_row| / 127, q = clamp(rne(w * (127 / max)), -127, 127).
void quantizeRows(const WeightTensor &w, int64_t rows, int64_t cols, int8_t *q,
                  float *scales) {
  std::vector<float> buffer(cols);
  const float *row = buffer.data();
  for (int64_t r = 0; r < rows; ++r) {
    w.toF32(r * cols, cols, buffer.data());
    float amax = 0.0f;
    for (int64_t c = 0; c < cols; ++c)
      amax = std::max(amax, std::fabs(row[c]));
    const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    scales[r] = amax / 127.0f;
    for (int64_t c = 0; c < cols; ++c) {
      const int v = static_cast<int>(std::nearbyint(row[c] * inv));
      q[r * cols + c] = static_cast<int8_t>(std::min(127, std::max(-127, v)));
    }
  }
}

/// The int8 replacement of one f32 `enc.weight`.
struct QuantizedWeight {
  Value values; ///< enc.weight "<name>.q8" : i8 [rows, cols]
  Value scales; ///< enc.weight "<name>.q8scale" : f32 [rows]
  std::optional<std::pair<float, float>> scaleRange; ///< min, max (with store)
};

struct QuantizeLinearInt8Pass
    : enc::impl::QuantizeLinearInt8PassBase<QuantizeLinearInt8Pass>,
      PassCounters {
  using QuantizeLinearInt8PassBase::QuantizeLinearInt8PassBase;

  void runOnOperation() override;

  /// Where the int8 weights go (and the f32 ones are read from); null
  /// (enc-opt, lit): the IR changes only.
  WeightStore *store = nullptr;

private:
  bool isSkipped(StringRef name) const { return skipPatterns.matches(name); }
  LogicalResult parseOptions();
  /// The int8 form of `w` (created once per weight op); null `values` when
  /// a store is set but lacks an f32 [rows, cols] tensor named like `w`.
  QuantizedWeight quantizeWeight(WeightOp w);

  SkipPatterns skipPatterns;
  llvm::StringMap<float> calibrationAbsMax;
  llvm::DenseMap<Operation *, QuantizedWeight> quantized;
  unsigned weightsCreated = 0;
};

LogicalResult QuantizeLinearInt8Pass::parseOptions() {
  if (failed(skipPatterns.parse(getOperation(), "enc-quantize-linear-int8",
                                 skip)))
    return failure();
  calibrationAbsMax.clear();
  if (calibration.empty())
    return success();
  auto buf = llvm::MemoryBuffer::getFile(calibration, /*IsText=*/true);
  if (!buf) {
    emitError(getOperation()->getLoc())
        << "enc-quantize-linear-int8: cannot read calibration file '"
        << calibration << "': " << buf.getError().message();
    return failure();
  }
  SmallVector<StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (auto [i, line] : llvm::enumerate(lines)) {
    line = line.split('#').first.trim();
    if (line.empty())
      continue;
    auto [name, rest] = line.split(' ');
    double absMax = 0;
    if (rest.trim().getAsDouble(absMax) || !(absMax > 0) ||
        !std::isfinite(absMax)) {
      emitError(getOperation()->getLoc())
          << "enc-quantize-linear-int8: " << calibration << ":" << i + 1
          << ": expected '<weight name> <absmax > 0>' but got '" << line
          << "'";
      return failure();
    }
    calibrationAbsMax[name] = static_cast<float>(absMax);
  }
  return success();
}

QuantizedWeight QuantizeLinearInt8Pass::quantizeWeight(WeightOp w) {
  auto it = quantized.find(w);
  if (it != quantized.end())
    return it->second;
  auto type = cast<RankedTensorType>(w.getType());
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  std::string name = w.getName().str();
  std::string qName = name + ".q8", sName = name + ".q8scale";
  QuantizedWeight result;
  if (store) {
    const WeightTensor *src = store->find(name);
    // The f32 value of the IR's weight, as stored (f32, f16 or bf16).
    if (!src || !isStoredFloat(src->type) ||
        src->shape != std::vector<int64_t>{rows, cols})
      return quantized[w] = result; // stays f32
    const WeightTensor *q = store->find(qName);
    const WeightTensor *s = store->find(sName);
    if (!q || !s) {
      auto qt = WeightTensor::allocate(WeightType::I8, {rows, cols});
      auto st = WeightTensor::allocate(WeightType::F32, {rows});
      quantizeRows(src->read(), rows, cols,
                   reinterpret_cast<int8_t *>(qt.mutableData()), st.mutableF32());
      store->set(qName, std::move(qt));
      store->set(sName, std::move(st));
      weightsCreated += 2;
      s = store->find(sName);
    }
    const float *sc = s->f32();
    auto [lo, hi] = std::minmax_element(sc, sc + rows);
    result.scaleRange = std::make_pair(*lo, *hi);
  }
  OpBuilder b(w);
  MLIRContext *ctx = &getContext();
  result.values = b.create<WeightOp>(
      w.getLoc(),
      RankedTensorType::get({rows, cols}, IntegerType::get(ctx, 8)), qName);
  result.scales = b.create<WeightOp>(
      w.getLoc(), RankedTensorType::get({rows}, b.getF32Type()), sName);
  return quantized[w] = result;
}

/// The f32 `enc.weight` of rank 2 feeding `v`, or null.
WeightOp f32Weight(Value v) {
  auto w = v.getDefiningOp<WeightOp>();
  if (!w)
    return {};
  auto t = cast<RankedTensorType>(w.getType());
  if (t.getRank() != 2 || !t.getElementType().isF32())
    return {};
  return w;
}

void QuantizeLinearInt8Pass::runOnOperation() {
  quantized.clear();
  weightsCreated = 0;
  if (failed(parseOptions()))
    return signalPassFailure();

  unsigned nQuantized = 0, nSkipped = 0, nQuantizeOps = 0, nEmbeddings = 0;
  llvm::SetVector<Operation *> replacedWeights;

  // Linears to rewrite, grouped by input (in program order of first use).
  llvm::MapVector<Value, SmallVector<std::pair<LinearOp, QuantizedWeight>>>
      byInput;
  getOperation()->walk([&](LinearOp op) {
    WeightOp w = f32Weight(op.getWeight());
    if (!w || cast<RankedTensorType>(w.getType()).getDimSize(1) > kMaxK)
      return;
    if (isSkipped(w.getName())) {
      ++nSkipped;
      return;
    }
    QuantizedWeight qw = quantizeWeight(w);
    if (!qw.values)
      return;
    byInput[op.getX()].push_back({op, qw});
    replacedWeights.insert(w);
  });

  MLIRContext *ctx = &getContext();
  SmallVector<std::pair<LinearOp, Value>> replacements;
  for (auto &[x, group] : byInput) {
    // static_scale when every Linear of the group is calibrated.
    std::optional<float> absMax;
    if (!calibrationAbsMax.empty()) {
      for (auto &[op, qw] : group) {
        auto w = op.getWeight().getDefiningOp<WeightOp>();
        auto it = calibrationAbsMax.find(w.getName());
        if (it == calibrationAbsMax.end()) {
          absMax.reset();
          break;
        }
        absMax = std::max(absMax.value_or(0.0f), it->second);
      }
    }
    OpBuilder b(ctx);
    setInsertionPointAfterProducer<QuantizeOp>(b, x);
    auto xType = cast<RankedTensorType>(x.getType());
    auto qType = RankedTensorType::get(
        xType.getShape(), IntegerType::get(ctx, 8, IntegerType::Unsigned));
    auto sType =
        RankedTensorType::get(xType.getShape().drop_back(), b.getF32Type());
    FloatAttr staticScale;
    if (absMax)
      staticScale = b.getF32FloatAttr(*absMax / 127.0f);
    auto quant = b.create<QuantizeOp>(x.getLoc(), qType, sType, x, staticScale);
    ++nQuantizeOps;

    for (auto &[op, qw] : group) {
      b.setInsertionPoint(op);
      FloatAttr lo, hi;
      if (qw.scaleRange) {
        lo = b.getF32FloatAttr(qw.scaleRange->first);
        hi = b.getF32FloatAttr(qw.scaleRange->second);
      }
      auto q = b.create<QLinearOp>(op.getLoc(), op.getType(), quant.getValues(),
                                   quant.getScales(), qw.values, qw.scales,
                                   op.getBias(), op.getEpilogue(), lo, hi);
      replacements.push_back({op, q.getResult()});
      ++nQuantized;
    }
  }
  // Only now: an input `x` may itself be the result of a replaced Linear.
  for (auto [op, q] : replacements) {
    op.getResult().replaceAllUsesWith(q);
    op.erase();
  }

  if (embeddings) {
    getOperation()->walk([&](EmbeddingOp op) {
      WeightOp w = f32Weight(op.getWord());
      if (!w || op.getWordScale())
        return;
      if (isSkipped(w.getName())) {
        ++nSkipped;
        return;
      }
      QuantizedWeight qw = quantizeWeight(w);
      if (!qw.values)
        return;
      op.getWordMutable().assign(qw.values);
      op.getWordScaleMutable().assign(qw.scales);
      replacedWeights.insert(w);
      ++nEmbeddings;
    });
  }

  // The replaced f32 weights are dead unless something else reads them.
  for (Operation *w : replacedWeights)
    if (w->use_empty())
      w->erase();

  numQuantized += nQuantized;
  numSkipped += nSkipped;
  numQuantizeOps += nQuantizeOps;
  numEmbeddings += nEmbeddings;
  recordCounts({{"num-quantized", nQuantized},
                {"num-skipped", nSkipped},
                {"num-quantize-ops", nQuantizeOps},
                {"num-embeddings", nEmbeddings},
                {"num-weights-created", weightsCreated}});
}

} // namespace

std::unique_ptr<Pass> mlir::enc::createQuantizeLinearInt8Pass(
    const QuantizeLinearInt8PassOptions &options, WeightStore *weights) {
  auto pass = std::make_unique<QuantizeLinearInt8Pass>(options);
  pass->store = weights;
  return pass;
}
