//===- CpuCodegen.cpp - enc IR -> Plan + C++ source -> shared object ------===//
//
// Each compute op becomes one PlanStep whose kernel symbol names the kernel
// instantiation (op, shapes, variant), e.g. enc_linear_f32_BxS_k384_n1536;
// the symbol's wrapper unpacks enc_step_ctx (buffers = inputs then result)
// and calls the kernel template with the static dims as template arguments
// and the batch/seq-dependent sizes as expressions of ctx->batch/ctx->seq.
// Float attributes (scale factor, divisor, epsilon, attention scale) travel
// in Step.fattrs and integer ones (position offset) in Step.iattrs, so one
// symbol serves every step with the same shapes. A multi-result op (enc.split)
// is one step whose last numResults operands are its results.
//
// Packed plans: when every op of @forward has a packed kernel (the fused
// pipeline; not the unfused attention of --pipeline=none), every per-token
// value [B, S, ...] is planned as [T, ...] (kDimTokens, the run's real
// tokens): row-wise kernels get c->tokens rows, and embedding, attention and
// pool use their packed forms, which read c->offsets. Otherwise the plan is
// padded, exactly as before.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/cpu/CpuCodegen.h"
#include "compiler/codegen/OpLowering.h"
// For packWeightsQ8 / packWeightsF32 (ISA-independent); their vector helpers
// are unused here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#include "compiler/codegen/cpu/kernels/enc_qgemm.h"
#include "compiler/codegen/cpu/kernels/enc_sgemm.h"
#pragma GCC diagnostic pop

#include "ir/EncOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <map>
#include <sstream>

using namespace encc;
using encc::codegen::makeError;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

namespace {

using namespace mlir::enc;

llvm::Error opError(Operation *op, const llvm::Twine &msg) {
  return codegen::opErrorIn("cpu codegen", op, msg);
}

using Shape = std::vector<int64_t>;

/// Plan shape of a tensor type: a dynamic dim 0 is the batch, any other
/// dynamic dim the sequence; `packed`: leading [batch, seq] is one token dim.
Shape planShape(RankedTensorType t, bool packed = false) {
  Shape s;
  int64_t i = 0;
  if (packed && t.getRank() >= 2 && t.isDynamicDim(0) && t.isDynamicDim(1)) {
    s.push_back(kDimTokens);
    i = 2;
  }
  for (; i < t.getRank(); ++i) {
    int64_t d = t.getDimSize(i);
    s.push_back(mlir::ShapedType::isDynamic(d) ? (i == 0 ? kDimBatch : kDimSeq)
                                               : d);
  }
  return s;
}

std::string dimExpr(int64_t d) {
  if (d == kDimBatch)
    return "c->batch";
  if (d == kDimSeq)
    return "c->seq";
  if (d == kDimTokens)
    return "c->tokens";
  return "int64_t(" + std::to_string(d) + ")";
}

/// C++ expression of the product of s[b, e) (static factors folded).
std::string prodExpr(const Shape &s, size_t b, size_t e) {
  int64_t st = 1;
  std::string dyn;
  for (size_t i = b; i < e; ++i) {
    if (s[i] >= 0)
      st *= s[i];
    else
      dyn += " * " + dimExpr(s[i]);
  }
  return "int64_t(" + std::to_string(st) + ")" + dyn;
}

/// Readable tag of s[b, e): "Bx12xSx32".
std::string shapeTag(const Shape &s, size_t b = 0, size_t e = SIZE_MAX) {
  e = std::min(e, s.size());
  std::string tag;
  for (size_t i = b; i < e; ++i) {
    if (!tag.empty())
      tag += "x";
    tag += s[i] == kDimBatch    ? "B"
           : s[i] == kDimSeq    ? "S"
           : s[i] == kDimTokens ? "T"
                                : std::to_string(s[i]);
  }
  return tag.empty() ? "scalar" : tag;
}

/// A static template argument: the dim if static, 0 (= run-time) otherwise.
std::string staticArg(int64_t d) { return std::to_string(d >= 0 ? d : 0); }

/// Whether every compute op of `func` has a packed kernel and every dynamic
/// tensor is per token ([?, ?, static...]) or per sequence ([?, static...]).
bool canRunPacked(mlir::func::FuncOp func) {
  using namespace mlir::enc;
  auto packable = [](Operation *op) {
    if (isa<WeightOp, FusionOp, YieldOp, mlir::func::FuncOp, mlir::func::ReturnOp>(op))
      return true; // no step of their own (a group's ops are checked one by one)
    if (!isa<EmbeddingOp, LinearOp, QLinearOp, QuantizeOp, ToBf16Op, AttentionOp,
             SplitOp, AddOp, AddLayerNormOp, LayerNormOp, RmsNormOp, GeluOp, GluOp, ScaleOp,
             DivOp, PoolOp, L2NormOp, TanhOp, RotaryOp>(op))
      return false;
    for (Value r : op->getResults()) {
      auto t = dyn_cast<RankedTensorType>(r.getType());
      if (!t || t.getRank() < 1 || !t.isDynamicDim(0))
        return false;
      for (int64_t i = 2; i < t.getRank(); ++i)
        if (t.isDynamicDim(i))
          return false;
    }
    return true;
  };
  return !func.walk([&](Operation *op) { return packable(op) ? mlir::WalkResult::advance() : mlir::WalkResult::interrupt(); })
              .wasInterrupted();
}

/// What the lowering of one plan step gets: the op, its operand and result
/// shapes (inputs, then results), and the helpers the kernel calls are
/// written with.
struct StepArgs {
  StepArgs(Operation *op, const std::vector<Shape> &in, const std::vector<Shape> &outs)
      : op(op), in(in), outs(outs), out(outs[0]), x(in[0]), r(in[0].size()), res(result(0)) {}

  Operation *op;
  const std::vector<Shape> &in, &outs;
  const Shape &out; ///< the first result
  const Shape &x;   ///< the first operand
  size_t r;         ///< x's rank
  std::string res;  ///< the first result's pointer in the wrapper

  /// Result i's float pointer in the wrapper body.
  std::string result(size_t i) const { return "OUT_F(" + std::to_string(in.size() + i) + ")"; }
  /// Result i's bf16 pointer in the wrapper body.
  std::string resultBf16(size_t i) const { return "OUT_BF(" + std::to_string(in.size() + i) + ")"; }
  /// Result i's u8 pointer in the wrapper body.
  std::string resultU8(size_t i) const { return "OUT_U8(" + std::to_string(in.size() + i) + ")"; }
  /// The product of all but the last dim / of all dims, as a C++ expression.
  std::string rows(const Shape &s) const { return prodExpr(s, 0, s.size() - 1); }
  std::string count(const Shape &s) const { return prodExpr(s, 0, s.size()); }
  llvm::Error needStatic(int64_t d, const char *what) const {
    if (d >= 0)
      return llvm::Error::success();
    return opError(op, llvm::Twine("expects a static ") + what);
  }
  llvm::Error needRank(const Shape &s, size_t rank, const char *what) const {
    if (s.size() == rank)
      return llvm::Error::success();
    return opError(op, llvm::Twine("expects ") + what + " of rank " + llvm::Twine(rank));
  }
};

struct Kernel {
  std::string symbol;
  std::string call; ///< the wrapper body
  std::vector<int64_t> iattrs;
  std::vector<float> fattrs;
};

class Generator {
public:
  Generator(mlir::enc::WeightStore &weights, bool allowPacked)
      : weights_(weights), allowPacked_(allowPacked) {}

  llvm::Expected<CpuCodegenResult> run(mlir::ModuleOp module);
  /// "" when this generator can lower `op`, else why not (lowerings()).
  static std::string whyNot(Operation *op) { return lowerings().whyNot(op); }

private:
  uint32_t addValue(std::string name, ValueKind kind, DType dtype, Shape shape) {
    return codegen::addPlanValue(plan_, std::move(name), kind, dtype, std::move(shape));
  }
  llvm::Error addWeight(mlir::enc::WeightOp op);
  /// The plan value of weight `name` (created on first use, so weights no
  /// step reads stay out of the artifact).
  uint32_t weightValue(const std::string &name);
  /// The packed form (packWeightsQ8) of the i8 [N, K] weight `name`, added
  /// to the store as "<name>packed" ("X.q8" -> "X.q8packed").
  llvm::Expected<uint32_t> packedWeightValue(Operation *user, Value weight);
  /// The packed form of the f32 or bf16 [N, K] weight `name`
  /// (packWeightsF32 / packWeightsBf16), added to the store as "<name>.sgemm".
  llvm::Expected<uint32_t> sgemmWeightValue(Operation *user, Value weight);
  /// Marks the conversions computed by their producer's step: each dynamic
  /// enc.quantize and each enc.to_bf16 of a layernorm or add_layernorm
  /// (an extra result of the producer's step), and the dynamic enc.quantize
  /// of an enc.qlinear whose float result nothing else reads; and the
  /// enc.add_layernorm computed by the step of the enc.qlinear it reads.
  /// (A rounding that is the only user of an attention or bf16 linear is
  /// folded into that op's result type by enc-convert-linear-bf16, in the
  /// IR.)
  void planConversionFusion(mlir::func::FuncOp func);
  /// The conversion fused into `op` of the given class, or null.
  template <class ConvOp> ConvOp fusedConversion(Operation *op) const {
    return llvm::dyn_cast_or_null<ConvOp>(fusedConversion_.lookup(op));
  }
  llvm::Error addStep(Operation *op);
  /// The contract (encrt/kernel_abi.h) of the kernel `step` calls: the
  /// counts, the iattrs, then each operand's dtype, rank and dims.
  std::vector<int64_t> contractOf(const PlanStep &step, const std::vector<int64_t> &iattrs,
                                  size_t numFattrs) const;
  llvm::Expected<Kernel> kernelFor(Operation *op,
                                   const std::vector<Shape> &in,
                                   const std::vector<Shape> &outs);

  /// One lowering per op class (OpLoweringTable): adding an op to the CPU
  /// backend is one method here and one line in lowerings().
  using LoweringTable = codegen::OpLoweringTable<Generator, llvm::Expected<Kernel>, const StepArgs &>;
  static const LoweringTable &lowerings();
  llvm::Expected<Kernel> lowerEmbedding(mlir::enc::EmbeddingOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerLinear(mlir::enc::LinearOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerQLinear(mlir::enc::QLinearOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerQuantize(mlir::enc::QuantizeOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerToBf16(mlir::enc::ToBf16Op op, const StepArgs &a);
  llvm::Expected<Kernel> lowerMatmul(mlir::enc::MatmulOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerAdd(mlir::enc::AddOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerScale(mlir::enc::ScaleOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerMask(mlir::enc::MaskOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerRelativePositionBias(mlir::enc::RelativePositionBiasOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerSoftmax(mlir::enc::SoftmaxOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerLayerNorm(mlir::enc::LayerNormOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerRmsNorm(mlir::enc::RmsNormOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerGelu(mlir::enc::GeluOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerTanh(mlir::enc::TanhOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerGlu(mlir::enc::GluOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerRotary(mlir::enc::RotaryOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerSplitHeads(mlir::enc::SplitHeadsOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerMergeHeads(mlir::enc::MergeHeadsOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerPool(mlir::enc::PoolOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerL2Norm(mlir::enc::L2NormOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerDiv(mlir::enc::DivOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerScaleMaskSoftmax(mlir::enc::ScaleMaskSoftmaxOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerAttention(mlir::enc::AttentionOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerSplit(mlir::enc::SplitOp op, const StepArgs &a);
  llvm::Expected<Kernel> lowerAddLayerNorm(mlir::enc::AddLayerNormOp op, const StepArgs &a);

  using WeightInfo = codegen::WeightInfo;

  mlir::enc::WeightStore &weights_;
  Plan plan_;
  bool allowPacked_;
  bool packed_ = false; ///< per-token values are [kDimTokens, ...]
  llvm::DenseMap<Value, uint32_t> ids_;
  llvm::DenseMap<Value, WeightInfo> weightOps_;    ///< enc.weight results
  std::map<std::string, uint32_t> weightIds_;
  std::map<std::string, uint32_t> packedIds_;
  /// producer -> the enc.quantize / enc.to_bf16 fused into it
  llvm::DenseMap<Operation *, Operation *> fusedConversion_;
  /// qlinear -> the add_layernorm its step computes (with that op's results
  /// and fused conversion as the step's results)
  llvm::DenseMap<Operation *, Operation *> fusedLayerNorm_;
  llvm::DenseMap<Operation *, Operation *> fusedInto_; ///< conversion -> producer
  bool usesInt8_ = false;
  std::vector<std::string> symbols_;              ///< in first-use order
  std::map<std::string, std::string> symbolCalls_; ///< symbol -> body
  /// symbol -> its plan-kernel contract (encrt/kernel_abi.h signature)
  std::map<std::string, std::vector<int64_t>> symbolContracts_;
};

llvm::Error Generator::addWeight(mlir::enc::WeightOp op) {
  auto info = codegen::checkWeightOp(op, weights_, "cpu codegen");
  if (!info)
    return info.takeError();
  weightOps_[op.getResult()] = std::move(*info);
  return llvm::Error::success();
}

uint32_t Generator::weightValue(const std::string &name) {
  auto it = weightIds_.find(name);
  if (it != weightIds_.end())
    return it->second;
  const mlir::enc::WeightTensor *w = weights_.find(name);
  uint32_t id = addValue(name, ValueKind::Weight, codegen::planDType(w->type), w->shape);
  weightIds_[name] = id;
  return id;
}

llvm::Expected<uint32_t> Generator::packedWeightValue(Operation *user,
                                                      Value weight) {
  auto it = weightOps_.find(weight);
  if (it == weightOps_.end())
    return opError(user, "expects its weight operand to be an enc.weight "
                         "(the packed int8 layout is made at compile time)");
  const WeightInfo &info = it->second;
  if (info.dtype != DType::I8 || info.shape.size() != 2)
    return opError(user, "expects an i8 [N, K] weight, got \"" + info.name + "\"");
  const int64_t N = info.shape[0], K = info.shape[1];
  if (N < 1 || K < 1 || K > enc_kernels::kQ8MaxK)
    return opError(user, "weight \"" + info.name + "\" has K = " +
                             std::to_string(K) + " (int8 kernels need 1 <= K <= " +
                             std::to_string(enc_kernels::kQ8MaxK) + ")");
  llvm::StringRef base(info.name);
  const std::string packed =
      base.ends_with(".q8") ? info.name + "packed" : info.name + ".q8packed";
  if (auto p = packedIds_.find(packed); p != packedIds_.end())
    return p->second;
  // Packed as the artifact is written.
  const mlir::enc::WeightTensor src = *weights_.find(info.name);
  weights_.set(packed, mlir::enc::WeightTensor::deferred(
                           mlir::enc::WeightType::I8,
                           {static_cast<int64_t>(enc_kernels::packedWeightsQ8Bytes(int(N), int(K)))},
                           [src, N, K](uint8_t *out) {
                             const mlir::enc::WeightTensor w = src.read();
                             enc_kernels::packWeightsQ8(reinterpret_cast<const int8_t *>(w.data()),
                                                        int(N), int(K), out);
                           }));
  weightIds_.erase(packed);
  uint32_t id = weightValue(packed);
  packedIds_[packed] = id;
  return id;
}

llvm::Expected<uint32_t> Generator::sgemmWeightValue(Operation *user,
                                                     Value weight) {
  auto it = weightOps_.find(weight);
  if (it == weightOps_.end())
    return opError(user, "expects its weight operand to be an enc.weight "
                         "(the packed fp32 layout is made at compile time)");
  const WeightInfo &info = it->second;
  const bool bf16 = info.dtype == DType::BF16;
  if ((info.dtype != DType::F32 && !bf16) || info.shape.size() != 2 ||
      info.shape[0] < 1 || info.shape[1] < 1 || (bf16 && info.shape[1] % 2 != 0))
    return opError(user, "expects an f32 or bf16 [N, K] weight (K even for bf16), got \"" +
                             info.name + "\"");
  const int64_t N = info.shape[0], K = info.shape[1];
  const std::string packed = info.name + ".sgemm";
  if (auto p = packedIds_.find(packed); p != packedIds_.end())
    return p->second;
  // Packed as the artifact is written.
  const mlir::enc::WeightTensor src = *weights_.find(info.name);
  auto t = mlir::enc::WeightTensor::deferred(
      bf16 ? mlir::enc::WeightType::BF16 : mlir::enc::WeightType::F32,
      {enc_kernels::sgemmPanels(N), K, enc_kernels::kSgemmPanel}, [src, N, K, bf16](uint8_t *out) {
        const mlir::enc::WeightTensor w = src.read();
        if (bf16)
          enc_kernels::packWeightsBf16(reinterpret_cast<const uint16_t *>(w.data()), N, K,
                                       reinterpret_cast<uint16_t *>(out));
        else
          enc_kernels::packWeightsF32(w.f32(), N, K, reinterpret_cast<float *>(out));
      });
  if (t.byteSize() != (bf16 ? enc_kernels::packedWeightsBf16Elems(N, K) * sizeof(uint16_t)
                            : enc_kernels::packedWeightsF32Floats(N, K) * sizeof(float)))
    return opError(user, "internal error: the packed layout's size disagrees with its shape");
  weights_.set(packed, std::move(t));
  weightIds_.erase(packed);
  uint32_t id = weightValue(packed);
  packedIds_[packed] = id;
  return id;
}

/// Whether `op`'s (first) result is bf16: an enc.attention or bf16
/// enc.linear into which enc-convert-linear-bf16 folded the rounding (the
/// kernel writes bf16 as it stores).
static bool hasBf16Result(Operation *op) {
  return op->getNumResults() > 0 &&
         cast<RankedTensorType>(op->getResult(0).getType()).getElementType().isBF16();
}

/// Whether a grouped qlinear's step may also compute its consumer: such a
/// step splits its rows, not its columns, between tasks (a row's consumer
/// needs all of its columns), so each task reads the whole weight. Measured
/// (BERT-base int8, 1 x 128, this project's Xeon): with weights of 590 KB
/// (768 x 768; all of MiniLM's) the fused step is faster than the separate
/// ones (1.2 vs 1.65 ms per 12 layers), with 2.4 MB (768 x 3072, 3072 x 768)
/// slower (GELU + quantize 5.1 vs 4.5 ms, add_layernorm 3.9 vs 3.6 ms). So:
/// weights that fit a core's L2.
static bool fusesConsumerOfQLinear(mlir::enc::QLinearOp q) {
  constexpr int64_t kMaxWeightBytes = 1 << 20;
  auto w = cast<RankedTensorType>(q.getWeight().getType());
  return w.hasStaticShape() && w.getNumElements() <= kMaxWeightBytes;
}

void Generator::planConversionFusion(mlir::func::FuncOp func) {
  // Of the groups enc-form-fusion-groups made, this backend computes a
  // (add_)layernorm + its dynamic quantize or to_bf16, and a qlinear + its
  // dynamic quantize, in one step (more results); every other group's ops
  // get a step each.
  codegen::forEachGroupedPair(func, [&](Operation *producer, Operation *conversion) {
    if (fusedConversion_.count(producer))
      return;
    auto q = dyn_cast<mlir::enc::QuantizeOp>(conversion);
    const bool dynamicQuantize = q && !q.getStaticScale();
    if (auto qlinear = dyn_cast<mlir::enc::QLinearOp>(producer)) {
      // Its float result's only user is the quantize (the group's rule).
      if (!dynamicQuantize || !fusesConsumerOfQLinear(qlinear))
        return;
    } else if (!isa<mlir::enc::LayerNormOp, mlir::enc::AddLayerNormOp>(producer) ||
               (!dynamicQuantize && !isa<mlir::enc::ToBf16Op>(conversion))) {
      return;
    }
    auto t = cast<RankedTensorType>(producer->getResult(0).getType());
    if (t.getRank() < 1 || t.isDynamicDim(t.getRank() - 1))
      return;
    fusedConversion_[producer] = conversion;
    fusedInto_[conversion] = producer;
  });
  // A qlinear + the add_layernorm of its result (+ that one's dynamic
  // quantize, if the step above fused one in: qlinearAddLayerNorm computes
  // no other conversion).
  codegen::forEachGroupedPair(func, [&](Operation *producer, Operation *ln) {
    auto q = dyn_cast<mlir::enc::QLinearOp>(producer);
    if (!q || !isa<mlir::enc::AddLayerNormOp>(ln) || !fusesConsumerOfQLinear(q))
      return;
    if (Operation *conversion = fusedConversion_.lookup(ln); conversion && !isa<mlir::enc::QuantizeOp>(conversion))
      return;
    auto t = cast<RankedTensorType>(ln->getResult(0).getType());
    if (t.getRank() < 1 || t.isDynamicDim(t.getRank() - 1))
      return;
    fusedLayerNorm_[producer] = ln;
    fusedInto_[ln] = producer;
  });
}

/// The kernels mask keys past each sequence's length (right padding) only.
template <typename OpT> std::string rightPaddingOnly(OpT op) {
  if (op.getPadding() == mlir::enc::Padding::right)
    return "";
  return "padding " + mlir::enc::stringifyPadding(op.getPadding()).str() +
         " is not implemented (only right)";
}

const Generator::LoweringTable &Generator::lowerings() {
  static const LoweringTable table = [] {
    LoweringTable t;
    t.add(&Generator::lowerEmbedding)
        .add(&Generator::lowerLinear)
        .add(&Generator::lowerQLinear)
        .add(&Generator::lowerQuantize)
        .add(&Generator::lowerToBf16)
        .add(&Generator::lowerMatmul)
        .add(&Generator::lowerAdd)
        .add(&Generator::lowerScale)
        .add(&Generator::lowerMask)
        .add(&Generator::lowerRelativePositionBias)
        .add(&Generator::lowerSoftmax)
        .add(&Generator::lowerLayerNorm)
        .add(&Generator::lowerRmsNorm)
        .add(&Generator::lowerGelu)
        .add(&Generator::lowerTanh)
        .add(&Generator::lowerGlu)
        .add(&Generator::lowerRotary)
        .add(&Generator::lowerSplitHeads)
        .add(&Generator::lowerMergeHeads)
        .add(&Generator::lowerPool)
        .add(&Generator::lowerL2Norm)
        .add(&Generator::lowerDiv)
        .add(&Generator::lowerScaleMaskSoftmax)
        .add(&Generator::lowerAttention)
        .add(&Generator::lowerSplit)
        .add(&Generator::lowerAddLayerNorm)
        .check(&rightPaddingOnly<MaskOp>)
        .check(&rightPaddingOnly<ScaleMaskSoftmaxOp>)
        .check(&rightPaddingOnly<AttentionOp>);
    return t;
  }();
  return table;
}

llvm::Expected<Kernel> Generator::kernelFor(Operation *op,
                                            const std::vector<Shape> &in,
                                            const std::vector<Shape> &outs) {
  const LoweringTable::Fn *lower = lowerings().lookup(op);
  if (!lower)
    return opError(op, "unsupported op (the CPU codegen has no kernel for it)");
  return (*lower)(*this, op, StepArgs(op, in, outs));
}

llvm::Expected<Kernel> Generator::lowerEmbedding(EmbeddingOp e, const StepArgs &a) {
  const std::vector<Shape> &in = a.in;
  const Shape &out = a.out;
  const std::string &res = a.res;
  Kernel k;
  if (auto err = a.needRank(out, packed_ ? 2 : 3, "a result"))
    return std::move(err);
  if (auto err = a.needStatic(out.back(), "hidden size"))
    return std::move(err);
  const int64_t V = in[1][0], P = in[2][0], T = in[3][0], H = out.back();
  const bool q8 = e.isQuantized();
  const bool bf16 = cast<RankedTensorType>(e.getWord().getType()).getElementType().isBF16();
  // Operands: ids, word, pos, type table, [word_scale], [type_ids].
  const std::string typeIds = e.getTypeIds() ? "IN_I(" + std::to_string(q8 ? 5 : 4) + ")" : "nullptr";
  k.symbol = std::string("enc_embedding_") + (q8 ? "q8_" : bf16 ? "bf16_" : "f32_") + (e.getTypeIds() ? "typed_" : "") +
             shapeTag(out) + "_v" + std::to_string(V) + "_p" + std::to_string(P) + "_t" + std::to_string(T);
  // Positions s + offset, or counted past literal pad ids (position_pad_id; -1: none).
  k.iattrs = {static_cast<int64_t>(e.getPositionOffset()), e.getPositionPadId() ? int64_t(*e.getPositionPadId()) : -1};
  usesInt8_ |= q8;
  const std::string tables = std::string(q8 ? "IN_I8(1), IN_F(4), " : bf16 ? "IN_BF(1), " : "IN_F(1), ") + std::to_string(V) +
                             ", IN_F(2), " + std::to_string(P) + ", IN_F(3), " + std::to_string(T) + ", " + res;
  const std::string name = std::string(q8 ? "embeddingQ8" : "embedding") + (packed_ ? "Packed" : "");
  const std::string rows = packed_ ? ", c->offsets, c->batch, c->seq" : ", " + dimExpr(out[0]) + ", " + dimExpr(out[1]);
  k.call = "enc_kernels::" + name + "<" + std::to_string(H) + ">(IN_I(0), " + typeIds + ", " + tables + rows +
           ", iattr(c, 0, 0), iattr(c, 1, -1), t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerLinear(LinearOp l, const StepArgs &a) {
  Operation *op = a.op;
  const Shape &x = a.x;
  const size_t r = a.r;
  const std::string &res = a.res;
  Kernel k;
  auto wt = cast<RankedTensorType>(l.getWeight().getType());
  if (!wt.hasStaticShape() || wt.getRank() != 2)
    return opError(op, "expects a static [N, K] weight");
  const int64_t N = wt.getDimSize(0), K = wt.getDimSize(1);
  if (x[r - 1] != K)
    return opError(op, "expects activations of K = " + std::to_string(K));
  std::string epiArg, epiTag;
  switch (l.getEpilogue()) {
  case Epilogue::none:
    epiArg = "enc_kernels::kEpiNone";
    break;
  case Epilogue::gelu:
    epiArg = "enc_kernels::kEpiGelu";
    epiTag = "_gelu";
    break;
  case Epilogue::gelu_tanh:
    epiArg = "enc_kernels::kEpiGeluTanh";
    epiTag = "_gelutanh";
    break;
  }
  const bool bias = static_cast<bool>(l.getBias());
  const bool bf16 = wt.getElementType().isBF16();
  if (bf16 && K % 2 != 0)
    return opError(op, "expects an even K for bf16 operands");
  const bool bf16Out = hasBf16Result(op);
  k.symbol = std::string("enc_linear_") + (bf16 ? "bf16_" : "f32_") + shapeTag(x, 0, r - 1) + "_k" +
             std::to_string(K) + "_n" + std::to_string(N) +
             (bias ? "" : "_nobias") + epiTag + (bf16Out ? "_tobf16" : "");
  k.call = std::string("enc_kernels::") + (bf16 ? "linearBf16<" : "linear<") + std::to_string(K) + ", " +
           std::to_string(N) + ", " + epiArg + ">(" + (bf16 ? "IN_BF(0), IN_BF(1), " : "IN_F(0), IN_F(1), ") +
           (bias ? "IN_F(2)" : "nullptr") + ", " + (bf16Out ? a.resultBf16(0) : res) + ", " + a.rows(x) +
           ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerQLinear(QLinearOp q, const StepArgs &a) {
  Operation *op = a.op;
  const Shape &x = a.x;
  const size_t r = a.r;
  const std::string &res = a.res;
  Kernel k;
  auto wt = cast<RankedTensorType>(q.getWeight().getType());
  if (!wt.hasStaticShape() || wt.getRank() != 2)
    return opError(op, "expects a static [N, K] weight");
  const int64_t N = wt.getDimSize(0), K = wt.getDimSize(1);
  if (x[r - 1] != enc_kernels::q8RowStride(K))
    return opError(op, "expects activations of K = " + std::to_string(K));
  std::string epiArg, epiTag;
  switch (q.getEpilogue()) {
  case Epilogue::none:
    epiArg = "enc_kernels::kQ8EpiNone";
    break;
  case Epilogue::gelu:
    epiArg = "enc_kernels::kQ8EpiGelu";
    epiTag = "_gelu";
    break;
  case Epilogue::gelu_tanh:
    epiArg = "enc_kernels::kQ8EpiGeluTanh";
    epiTag = "_gelutanh";
    break;
  }
  const bool bias = static_cast<bool>(q.getBias());
  usesInt8_ = true;
  if (auto ln = llvm::dyn_cast_or_null<AddLayerNormOp>(fusedLayerNorm_.lookup(op))) {
    // Operands: the qlinear's, then the residual, gamma and beta; results:
    // the LayerNorm's rows, [their quantised values and scales].
    const size_t nq = op->getNumOperands();
    if (a.out.empty() || a.out.back() != N || a.in[nq] != a.out)
      return opError(op, "expects a residual LayerNorm of the qlinear's width");
    const bool quantized = static_cast<bool>(fusedConversion<QuantizeOp>(ln));
    k.symbol = std::string("enc_qlinear_add_layernorm") + (quantized ? "_quantize" : "") + "_u8s8_" +
               shapeTag(x, 0, r - 1) + "_k" + std::to_string(K) + "_n" + std::to_string(N) +
               (bias ? "" : "_nobias") + epiTag;
    auto in = [](size_t i) { return "IN_F(" + std::to_string(i) + ")"; };
    k.call = "enc_kernels::qlinearAddLayerNorm<" + std::to_string(K) + ", " + std::to_string(N) + ", " + epiArg +
             ">(IN_U8(0), IN_F(1), IN_V(2), IN_F(3), " + (bias ? "IN_F(4)" : "nullptr") + ", " + in(nq) + ", " +
             in(nq + 1) + ", " + in(nq + 2) + ", " + res + ", " +
             (quantized ? a.resultU8(1) + ", " + a.result(2) : "nullptr, nullptr") +
             ", " + a.rows(x) + ", fattr(c, 0, 1e-12f), t, n);";
    k.fattrs = {ln.getEpsilon().convertToFloat()};
    return k;
  }
  const bool quantizeOut = static_cast<bool>(fusedConversion<QuantizeOp>(op));
  k.symbol = std::string(quantizeOut ? "enc_qlinear_quantize_u8s8_" : "enc_qlinear_u8s8_") +
             shapeTag(x, 0, r - 1) + "_k" + std::to_string(K) + "_n" + std::to_string(N) +
             (bias ? "" : "_nobias") + epiTag;
  // Operands x, x scales, packed weight, weight scales, [bias]; then the
  // results: y, and with the quantize fused in its values and scales.
  const std::string quantized = quantizeOut ? ", " + a.resultU8(1) + ", " + a.result(2) : "";
  k.call = std::string("enc_kernels::") + (quantizeOut ? "qlinearQuantize<" : "qlinear<") + std::to_string(K) +
           ", " + std::to_string(N) + ", " + epiArg + ">(IN_U8(0), IN_F(1), IN_V(2), IN_F(3), " +
           (bias ? "IN_F(4)" : "nullptr") + ", " + res + quantized + ", " + a.rows(x) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerQuantize(QuantizeOp q, const StepArgs &a) {
  const Shape &x = a.x;
  const size_t r = a.r;
  Kernel k;
  if (auto err = a.needStatic(x[r - 1], "last dim"))
    return std::move(err);
  usesInt8_ = true;
  k.symbol = "enc_quantize_u8_" + shapeTag(x);
  k.call = "enc_kernels::quantizeRows<" + std::to_string(x[r - 1]) +
           ">(IN_F(0), OUT_U8(1), OUT_F(2), " + a.rows(x) +
           ", fattr(c, 0, 0.0f), t, n);";
  // One contract for both forms (a static and a dynamic quantize of rows of
  // one width share the symbol): fattr 0 is the static scale, 0 = per row.
  auto s = q.getStaticScale();
  k.fattrs = {s ? s->convertToFloat() : 0.0f};
  return k;
}

llvm::Expected<Kernel> Generator::lowerToBf16(ToBf16Op, const StepArgs &a) {
  Kernel k;
  k.symbol = "enc_to_bf16_" + shapeTag(a.x);
  k.call = "enc_kernels::toBf16(IN_F(0), OUT_BF(1), " + a.count(a.x) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerMatmul(MatmulOp m, const StepArgs &a) {
  Operation *op = a.op;
  const std::vector<Shape> &in = a.in;
  const Shape &x = a.x;
  const size_t r = a.r;
  const std::string &res = a.res;
  Kernel k;
  const Shape &b = in[1];
  if (r < 2 || b.size() != r)
    return opError(op, "expects operands of equal rank >= 2");
  const bool tb = m.getTransposeB();
  const int64_t M = x[r - 2], K = x[r - 1], N = tb ? b[r - 2] : b[r - 1];
  k.symbol = std::string("enc_matmul_") + (tb ? "nt" : "nn") + "_f32_" +
             shapeTag(x) + "_" + shapeTag(b);
  k.call = std::string("enc_kernels::") + (tb ? "matmulNT<" : "matmulNN<") +
           staticArg(tb ? K : N) + ">(IN_F(0), IN_F(1), " + res + ", " +
           prodExpr(x, 0, r - 2) + ", " + dimExpr(M) + ", " + dimExpr(N) +
           ", " + dimExpr(K) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerAdd(AddOp, const StepArgs &a) {
  const Shape &out = a.out;
  const std::string &res = a.res;
  Kernel k;
  k.symbol = "enc_add_f32_" + shapeTag(out);
  k.call = "enc_kernels::add(IN_F(0), IN_F(1), " + res + ", " + a.count(out) +
           ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerScale(ScaleOp s, const StepArgs &a) {
  const Shape &out = a.out;
  const std::string &res = a.res;
  Kernel k;
  k.symbol = "enc_scale_f32_" + shapeTag(out);
  k.call = "enc_kernels::scale(IN_F(0), " + res + ", " + a.count(out) +
           ", fattr(c, 0, 1.0f), t, n);";
  k.fattrs = {s.getFactor().convertToFloat()};
  return k;
}

llvm::Expected<Kernel> Generator::lowerMask(MaskOp m, const StepArgs &a) {
  Operation *op = a.op;
  const Shape &x = a.x;
  const size_t r = a.r;
  const std::string &res = a.res;
  Kernel k;
  if (r < 2)
    return opError(op, "expects scores of rank >= 2");
  k.symbol = "enc_mask_f32_" + shapeTag(x);
  k.call = "enc_kernels::mask(IN_F(0), IN_I(1), " + res + ", " +
           dimExpr(x[0]) + ", " + prodExpr(x, 1, r - 1) + ", " +
           dimExpr(x[r - 1]) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerRelativePositionBias(RelativePositionBiasOp rpb, const StepArgs &a) {
  const Shape &x = a.x;
  if (auto err = a.needRank(x, 4, "scores"))
    return std::move(err);
  if (auto err = a.needStatic(x[1], "head count"))
    return std::move(err);
  const std::string buckets = std::to_string(a.in[1][0]), dist = std::to_string(rpb.getMaxDistance());
  Kernel k;
  k.symbol = "enc_relative_position_bias_f32_" + shapeTag(x) + "_b" + buckets + "_d" + dist;
  k.call = "enc_kernels::relativePositionBias(IN_F(0), IN_F(1), " + a.res + ", " + dimExpr(x[0]) + ", " +
           std::to_string(x[1]) + ", " + dimExpr(x[2]) + ", " + buckets + ", " + dist + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerSoftmax(SoftmaxOp, const StepArgs &a) {
  const Shape &x = a.x;
  const size_t r = a.r;
  const std::string &res = a.res;
  Kernel k;
  k.symbol = "enc_softmax_f32_" + shapeTag(x);
  k.call = "enc_kernels::softmax<" + staticArg(x[r - 1]) + ">(IN_F(0), " +
           res + ", " + a.rows(x) + ", " + dimExpr(x[r - 1]) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerLayerNorm(LayerNormOp ln, const StepArgs &a) {
  Operation *op = a.op;
  const Shape &x = a.x;
  const size_t r = a.r;
  const std::string &res = a.res;
  Kernel k;
  if (auto err = a.needStatic(x[r - 1], "last dim"))
    return std::move(err);
  if (fusedConversion<QuantizeOp>(op)) {
    usesInt8_ = true;
    k.symbol = "enc_layernorm_quantize_f32_" + shapeTag(x);
    k.call = "enc_kernels::layerNormQuantize<" + std::to_string(x[r - 1]) +
             ">(IN_F(0), IN_F(1), IN_F(2), " + res + ", OUT_U8(4), OUT_F(5), " +
             a.rows(x) + ", fattr(c, 0, 1e-12f), t, n);";
  } else if (fusedConversion<ToBf16Op>(op)) {
    k.symbol = "enc_layernorm_to_bf16_f32_" + shapeTag(x);
    k.call = "enc_kernels::layerNormBf16<" + std::to_string(x[r - 1]) + ">(IN_F(0), IN_F(1), IN_F(2), " + res +
             ", " + a.resultBf16(1) + ", " + a.rows(x) + ", fattr(c, 0, 1e-12f), t, n);";
  } else {
    k.symbol = "enc_layernorm_f32_" + shapeTag(x);
    k.call = "enc_kernels::layerNorm<" + std::to_string(x[r - 1]) +
             ">(IN_F(0), IN_F(1), IN_F(2), " + res + ", " + a.rows(x) +
             ", fattr(c, 0, 1e-12f), t, n);";
  }
  k.fattrs = {ln.getEpsilon().convertToFloat()};
  return k;
}

llvm::Expected<Kernel> Generator::lowerRmsNorm(RmsNormOp rn, const StepArgs &a) {
  const Shape &x = a.x;
  Kernel k;
  if (auto err = a.needStatic(x.back(), "last dim"))
    return std::move(err);
  const int64_t G = a.in[1][0];
  if (G < 1 || x.back() % G != 0)
    return opError(a.op, "expects a gamma size that divides the last dim");
  const std::string groups = a.rows(x) + " * " + std::to_string(x.back() / G);
  k.symbol = "enc_rms_norm_g" + std::to_string(G) + "_f32_" + shapeTag(x);
  k.call = "enc_kernels::rmsNorm<" + std::to_string(G) + ">(IN_F(0), IN_F(1), " + a.res + ", " + groups +
           ", fattr(c, 0, 1e-6f), t, n);";
  k.fattrs = {rn.getEpsilon().convertToFloat()};
  return k;
}

llvm::Expected<Kernel> Generator::lowerGelu(GeluOp g, const StepArgs &a) {
  const Shape &x = a.x;
  const std::string &res = a.res;
  Kernel k;
  const bool t = g.getApproximate() == GeluApproximation::tanh;
  k.symbol = std::string("enc_gelu") + (t ? "_tanh" : "") + "_f32_" + shapeTag(x);
  k.call = std::string("enc_kernels::geluAct<") +
           (t ? "enc_kernels::kGeluTanh" : "enc_kernels::kGeluErf") +
           ">(IN_F(0), " + res + ", " + a.count(x) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerTanh(TanhOp, const StepArgs &a) {
  Kernel k;
  k.symbol = "enc_tanh_f32_" + shapeTag(a.x);
  k.call = "enc_kernels::tanhAct(IN_F(0), " + a.res + ", " + a.count(a.x) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerGlu(GluOp g, const StepArgs &a) {
  const Shape &out = a.out;
  Kernel k;
  if (auto err = a.needStatic(out.back(), "result last dim"))
    return std::move(err);
  std::string kind;
  switch (g.getKind()) {
  case GluKind::geglu: kind = "enc_kernels::kGeglu"; break;
  case GluKind::geglu_tanh: kind = "enc_kernels::kGegluTanh"; break;
  case GluKind::swiglu: kind = "enc_kernels::kSwiglu"; break;
  }
  k.symbol = "enc_glu_" + stringifyGluKind(g.getKind()).str() + "_f32_" + shapeTag(a.x);
  k.call = "enc_kernels::glu<" + std::to_string(out.back()) + ", " + kind + ">(IN_F(0), " + a.res + ", " +
           a.rows(out) + ", " + std::to_string(out.back()) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerRotary(RotaryOp r, const StepArgs &a) {
  const Shape &x = a.x;
  Kernel k;
  if (auto err = a.needStatic(x.back(), "last dim"))
    return std::move(err);
  const int64_t N = static_cast<int64_t>(r.getNumHeads()), D = x.back() / N;
  std::string layout;
  switch (r.getLayout()) {
  case RotaryLayout::half: layout = "enc_kernels::kRotaryHalf"; break;
  case RotaryLayout::interleaved: layout = "enc_kernels::kRotaryInterleaved"; break;
  }
  const std::string params = std::to_string(N) + ", " + std::to_string(D) + ", " +
                             std::to_string(r.getRotaryDim()) + ", " + layout;
  k.symbol = "enc_rotary_" + stringifyRotaryLayout(r.getLayout()).str() + "_r" + std::to_string(r.getRotaryDim()) +
             "_h" + std::to_string(N) + "_f32_" + shapeTag(x);
  if (packed_)
    k.call = "enc_kernels::rotaryPacked<" + params + ">(IN_F(0), " + a.res +
             ", c->offsets, c->batch, fattr(c, 0, 10000.0f), t, n);";
  else
    k.call = "enc_kernels::rotary<" + params + ">(IN_F(0), " + a.res + ", " + dimExpr(x[0]) + ", " +
             dimExpr(x[1]) + ", fattr(c, 0, 10000.0f), t, n);";
  k.fattrs = {r.getTheta().convertToFloat()};
  return k;
}

llvm::Expected<Kernel> Generator::lowerSplitHeads(SplitHeadsOp, const StepArgs &a) {
  Operation *op = a.op;
  const Shape &out = a.out;
  const Shape &x = a.x;
  const std::string &res = a.res;
  Kernel k;
  if (auto err = a.needRank(x, 3, "an input"))
    return std::move(err);
  if (auto err = a.needRank(out, 4, "a result"))
    return std::move(err);
  if (out[1] < 0 || out[3] < 0)
    return opError(op, "expects static heads and head dim");
  k.symbol = "enc_split_heads_f32_" + shapeTag(x) + "_h" + std::to_string(out[1]);
  k.call = "enc_kernels::splitHeads<" + std::to_string(out[1]) + ", " +
           std::to_string(out[3]) + ">(IN_F(0), " + res + ", " +
           dimExpr(x[0]) + ", " + dimExpr(x[1]) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerMergeHeads(MergeHeadsOp, const StepArgs &a) {
  Operation *op = a.op;
  const Shape &x = a.x;
  const std::string &res = a.res;
  Kernel k;
  if (auto err = a.needRank(x, 4, "an input"))
    return std::move(err);
  if (x[1] < 0 || x[3] < 0)
    return opError(op, "expects static heads and head dim");
  k.symbol = "enc_merge_heads_f32_" + shapeTag(x);
  k.call = "enc_kernels::mergeHeads<" + std::to_string(x[1]) + ", " +
           std::to_string(x[3]) + ">(IN_F(0), " + res + ", " +
           dimExpr(x[0]) + ", " + dimExpr(x[2]) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerPool(PoolOp p, const StepArgs &a) {
  const Shape &x = a.x;
  const std::string &res = a.res;
  Kernel k;
  if (auto err = a.needRank(x, packed_ ? 2 : 3, "an input"))
    return std::move(err);
  if (auto err = a.needStatic(x.back(), "hidden size"))
    return std::move(err);
  const PoolingMode mode = p.getMode();
  std::string modeArg;
  switch (mode) {
  case PoolingMode::cls: modeArg = "enc_kernels::kPoolCls"; break;
  case PoolingMode::mean: modeArg = "enc_kernels::kPoolMean"; break;
  case PoolingMode::last: modeArg = "enc_kernels::kPoolLast"; break;
  case PoolingMode::splade: modeArg = "enc_kernels::kPoolSplade"; break;
  }
  k.symbol = "enc_pool_" + stringifyPoolingMode(mode).str() + "_f32_" + shapeTag(x);
  if (packed_)
    k.call = "enc_kernels::poolPacked<" + std::to_string(x.back()) + ", " +
             modeArg + ">(IN_F(0), c->offsets, " + res + ", c->batch, t, n);";
  else
    k.call = "enc_kernels::pool<" + std::to_string(x[2]) + ", " + modeArg +
             ">(IN_F(0), IN_I(1), " + res + ", " + dimExpr(x[0]) + ", " +
             dimExpr(x[1]) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerL2Norm(L2NormOp, const StepArgs &a) {
  const Shape &x = a.x;
  const size_t r = a.r;
  const std::string &res = a.res;
  Kernel k;
  if (auto err = a.needStatic(x[r - 1], "last dim"))
    return std::move(err);
  k.symbol = "enc_l2norm_f32_" + shapeTag(x);
  k.call = "enc_kernels::l2Norm<" + std::to_string(x[r - 1]) + ">(IN_F(0), " +
           res + ", " + a.rows(x) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerDiv(DivOp d, const StepArgs &a) {
  const Shape &out = a.out;
  const std::string &res = a.res;
  Kernel k;
  k.symbol = "enc_div_f32_" + shapeTag(out);
  k.call = "enc_kernels::divide(IN_F(0), " + res + ", " + a.count(out) +
           ", fattr(c, 0, 1.0f), t, n);";
  k.fattrs = {d.getDivisor().convertToFloat()};
  return k;
}

llvm::Expected<Kernel> Generator::lowerScaleMaskSoftmax(ScaleMaskSoftmaxOp sms, const StepArgs &a) {
  Operation *op = a.op;
  const Shape &x = a.x;
  const size_t r = a.r;
  const std::string &res = a.res;
  Kernel k;
  if (r < 2)
    return opError(op, "expects scores of rank >= 2");
  k.symbol = "enc_scale_mask_softmax_f32_" + shapeTag(x);
  k.call = "enc_kernels::scaleMaskSoftmax(IN_F(0), IN_I(1), " + res + ", " +
           dimExpr(x[0]) + ", " + prodExpr(x, 1, r - 1) + ", " +
           dimExpr(x[r - 1]) + ", fattr(c, 0, 1.0f), t, n);";
  k.fattrs = {sms.getScale().convertToFloat()};
  return k;
}

llvm::Expected<Kernel> Generator::lowerAttention(AttentionOp att, const StepArgs &a) {
  Operation *op = a.op;
  const std::vector<Shape> &in = a.in;
  const Shape &out = a.out;
  const std::string &res = a.res;
  Kernel k;
  const bool packed = att.isPacked();
  const size_t numIn = packed ? 1 : 3;
  if (in.size() != numIn + 1 + (att.getPositionBias() ? 1 : 0))
    return opError(op, "expects q, k, v or qkv, then lengths[, position_bias]");
  const size_t rank = packed_ ? 2 : 3;
  if (auto err = a.needRank(out, rank, "a result"))
    return std::move(err);
  const int64_t H = out.back(), NH = static_cast<int64_t>(att.getNumHeads()), KVH = att.kvHeads();
  if (H < 0 || NH <= 0 || H % NH != 0 || KVH <= 0 || NH % KVH != 0)
    return opError(op, "expects a static hidden size divisible by num_heads, divisible by num_kv_heads");
  const int64_t HKV = H / NH * KVH; // k's and v's width
  for (size_t i = 0; i < numIn; ++i) {
    const int64_t width = packed ? 3 * H : i == 0 ? H : HKV;
    if (in[i].size() != rank || in[i].back() != width)
      return opError(op, std::string("expects input ") + std::to_string(i) + " [" + (packed_ ? "T, " : "B, S, ") +
                             std::to_string(width) + "]");
  }
  const std::string Hs = std::to_string(H), lengths = "IN_I(" +
                                                     std::to_string(numIn) + ")";
  const std::string qkv =
      packed ? "IN_F(0), IN_F(0) + " + Hs + ", IN_F(0) + 2 * " + Hs + ", 3 * " + Hs
             : "IN_F(0), IN_F(1), IN_F(2), " + Hs;
  const bool bf16Out = hasBf16Result(op), bf16PV = att.getBf16Pv();
  // bf16_amx: attention as split bf16 tile products (PVBf16 and Split) in the
  // AMX object only (ENC_ATTN_AMX, set by enc_attention.h there) for heads of
  // a multiple of 16 columns, f32 elsewhere.
  const bool bf16Amx = att.getBf16Amx() && (H / NH) % 16 == 0;
  const std::string y = bf16Out ? a.resultBf16(0) : res;
  // The optional trailing arguments, in the kernel's order: position_bias
  // (the table operand after lengths, buckets and distance as constants)
  // or ALiBi (slopes from the head count, in the kernel),
  // the band of keys each query sees (window / causal: enc_kernels::AttnBand
  // {left, right}, -1 open), the grouped key/value heads (rows HKV apart,
  // query head h reads head h / group). Written up to the last one set.
  std::string trailing[3] = {"enc_kernels::RelativeBias{}", "enc_kernels::AttnBand{}", "enc_kernels::AttnKv{}"};
  int numTrailing = 0;
  std::string biasTag;
  if (att.getPositionBias()) {
    const std::string buckets = std::to_string(in[numIn + 1][0]), dist = std::to_string(*att.getMaxDistance());
    trailing[0] = "enc_kernels::RelativeBias{IN_F(" + std::to_string(numIn + 1) + "), " + buckets + ", " + dist + "}";
    numTrailing = 1;
    biasTag = "_rpb" + buckets + "_" + dist;
  } else if (att.getAlibi()) {
    trailing[0] = "enc_kernels::RelativeBias{nullptr, 0, 0, true}";
    numTrailing = 1;
    biasTag = "_alibi";
  }
  const int64_t left = att.getWindowAttr() ? att.getWindowAttr().getInt() : -1;
  const int64_t right = att.getCausal() ? 0 : left;
  if (left >= 0 || right >= 0) {
    trailing[1] = "enc_kernels::AttnBand{" + std::to_string(left) + ", " + std::to_string(right) + "}";
    numTrailing = 2;
    auto side = [](int64_t w) { return w < 0 ? std::string("all") : std::to_string(w); }; // a C identifier
    biasTag += "_band" + side(left) + "_" + side(right);
  }
  if (KVH != NH) {
    trailing[2] = "enc_kernels::AttnKv{" + std::to_string(HKV) + ", " + std::to_string(NH / KVH) + "}";
    numTrailing = 3;
    biasTag += "_kv" + std::to_string(KVH);
  }
  std::string bias;
  for (int i = 0; i < numTrailing; ++i)
    bias += ", " + trailing[i];
  k.symbol = std::string("enc_attention") + (packed ? "_packed" : "") + "_f32_" + shapeTag(out) + "_h" +
             std::to_string(NH) + biasTag + (bf16PV ? "_bf16pv" : bf16Amx ? "_bf16amx" : "") +
             (bf16Out ? "_tobf16" : "");
  const std::string head = std::to_string(NH) + ", " + std::to_string(H / NH) +
                           (bf16PV ? ", true" : bf16Amx ? ", ENC_ATTN_AMX != 0, ENC_ATTN_AMX != 0" : "") +
                           ">(" + qkv + ", ";
  if (packed_)
    k.call = "enc_kernels::attentionPacked<" + head + "c->offsets, " + lengths + ", " + y +
             ", c->batch, fattr(c, 0, 1.0f), t, n" + bias + ");";
  else
    k.call = "enc_kernels::attention<" + head + lengths + ", " + y + ", " +
             dimExpr(out[0]) + ", " + dimExpr(out[1]) +
             ", fattr(c, 0, 1.0f), t, n" + bias + ");";
  k.fattrs = {att.getScale().convertToFloat()};
  return k;
}

llvm::Expected<Kernel> Generator::lowerSplit(SplitOp sp, const StepArgs &a) {
  Operation *op = a.op;
  const std::vector<Shape> &outs = a.outs;
  const Shape &out = a.out;
  const Shape &x = a.x;
  const size_t r = a.r;
  Kernel k;
  const int64_t parts = static_cast<int64_t>(sp.getParts());
  if (parts < 1 || static_cast<int64_t>(outs.size()) != parts)
    return opError(op, "expects `parts` results");
  if (x[r - 1] < 0 || out.size() != r || out[r - 1] < 0 ||
      x[r - 1] != parts * out[r - 1])
    return opError(op, "expects a static last dim equal to parts x the "
                       "results' last dim");
  std::string ys;
  for (int64_t i = 0; i < parts; ++i)
    ys += (i ? ", " : "") + a.result(i);
  k.symbol = "enc_split_f32_" + shapeTag(x) + "_p" + std::to_string(parts);
  k.call = "float *const ys[" + std::to_string(parts) + "] = {" + ys +
           "};\n  enc_kernels::split<" + std::to_string(out[r - 1]) + ", " +
           std::to_string(parts) + ">(IN_F(0), ys, " + a.rows(x) + ", t, n);";
  return k;
}

llvm::Expected<Kernel> Generator::lowerAddLayerNorm(AddLayerNormOp aln, const StepArgs &a) {
  Operation *op = a.op;
  const std::vector<Shape> &in = a.in;
  const Shape &x = a.x;
  const size_t r = a.r;
  const std::string &res = a.res;
  Kernel k;
  if (auto err = a.needStatic(x[r - 1], "last dim"))
    return std::move(err);
  if (in[1] != x)
    return opError(op, "expects x and residual of the same shape");
  if (fusedConversion<ToBf16Op>(op)) {
    k.symbol = "enc_add_layernorm_to_bf16_f32_" + shapeTag(x);
    k.call = "enc_kernels::addLayerNormBf16<" + std::to_string(x[r - 1]) + ">(IN_F(0), IN_F(1), IN_F(2), IN_F(3), " +
             res + ", " + a.resultBf16(1) + ", " + a.rows(x) + ", fattr(c, 0, 1e-12f), t, n);";
  } else if (fusedConversion<QuantizeOp>(op)) {
    usesInt8_ = true;
    k.symbol = "enc_add_layernorm_quantize_f32_" + shapeTag(x);
    k.call = "enc_kernels::addLayerNormQuantize<" +
             std::to_string(x[r - 1]) +
             ">(IN_F(0), IN_F(1), IN_F(2), IN_F(3), " + res +
             ", OUT_U8(5), OUT_F(6), " + a.rows(x) +
             ", fattr(c, 0, 1e-12f), t, n);";
  } else {
    k.symbol = "enc_add_layernorm_f32_" + shapeTag(x);
    k.call = "enc_kernels::addLayerNorm<" + std::to_string(x[r - 1]) +
             ">(IN_F(0), IN_F(1), IN_F(2), IN_F(3), " + res + ", " +
             a.rows(x) + ", fattr(c, 0, 1e-12f), t, n);";
  }
  k.fattrs = {aln.getEpsilon().convertToFloat()};
  return k;
}

llvm::Error Generator::addStep(Operation *op) {
  if (fusedInto_.count(op))
    return llvm::Error::success(); // computed by its producer's step
  if (op->getNumResults() < 1)
    return opError(op, "expects at least one result");
  // The step's results: the op's (a qlinear's fused add_layernorm's instead:
  // its float result is read by nothing else), then those of a conversion
  // fused in. Operands: the op's, then a fused add_layernorm's but the first.
  Operation *ln = fusedLayerNorm_.lookup(op);
  Operation *last = ln ? ln : op;
  Operation *conv = fusedConversion_.lookup(last);
  std::vector<Value> results(last->result_begin(), last->result_end());
  if (conv)
    results.insert(results.end(), conv->result_begin(), conv->result_end());
  std::vector<Value> operands(op->operand_begin(), op->operand_end());
  if (ln)
    operands.insert(operands.end(), std::next(ln->operand_begin()), ln->operand_end());
  std::vector<Shape> outShapes;
  std::vector<DType> outTypes;
  for (Value r : results) {
    auto resType = dyn_cast<RankedTensorType>(r.getType());
    if (!resType || resType.getRank() < 1 ||
        !(resType.getElementType().isF32() || resType.getElementType().isBF16() ||
          resType.getElementType().isUnsignedInteger(8)))
      return opError(op, "expects ranked f32, bf16 or ui8 tensor results");
    Shape shape = planShape(resType, packed_);
    if (resType.getElementType().isUnsignedInteger(8)) {
      // Quantised rows are stored with the stride the int8 kernels read.
      if (shape.back() < 0)
        return opError(op, "expects a static last dim of its ui8 result");
      shape.back() = enc_kernels::q8RowStride(shape.back());
      outTypes.push_back(DType::U8);
    } else if (resType.getElementType().isBF16()) {
      outTypes.push_back(DType::BF16);
    } else {
      outTypes.push_back(DType::F32);
    }
    outShapes.push_back(std::move(shape));
  }

  PlanStep step;
  step.op = op->getName().getStringRef().str();
  if (ln)
    step.op += "+" + ln->getName().getStringRef().str();
  if (conv)
    step.op += "+" + conv->getName().getStringRef().str();
  std::vector<Shape> inShapes;
  for (auto [i, v] : llvm::enumerate(operands)) {
    uint32_t id;
    if (isa<mlir::enc::LinearOp>(op) && i == 1) {
      auto packed = sgemmWeightValue(op, v);
      if (!packed)
        return packed.takeError();
      id = *packed;
    } else if (auto it = ids_.find(v); it != ids_.end()) {
      id = it->second;
    } else if (isa<mlir::enc::QLinearOp>(op) && i == 2) {
      auto packed = packedWeightValue(op, v);
      if (!packed)
        return packed.takeError();
      id = *packed;
    } else if (auto w = weightOps_.find(v); w != weightOps_.end()) {
      id = weightValue(w->second.name);
    } else {
      return opError(op, "uses a value that is not a function argument, "
                         "weight or result of an earlier enc op");
    }
    step.operands.push_back(id);
    inShapes.push_back(plan_.values[id].shape);
  }
  if (inShapes.empty() || inShapes[0].empty())
    return opError(op, "expects a ranked first operand");
  auto kernel = kernelFor(op, inShapes, outShapes);
  if (!kernel)
    return kernel.takeError();

  const uint32_t stepIndex = plan_.steps.size();
  for (uint32_t id : step.operands)
    if (plan_.values[id].kind == ValueKind::Activation)
      plan_.values[id].lastStep = stepIndex;
  // Results: "<op>.<step>", or "<op>.<step>.<i>" for multi-result ops.
  std::string name = op->getName().stripDialect().str() + "." +
                     std::to_string(stepIndex);
  for (size_t i = 0; i < results.size(); ++i) {
    std::string resName =
        results.size() == 1 ? name : name + "." + std::to_string(i);
    uint32_t resId =
        addValue(resName, ValueKind::Activation, outTypes[i], outShapes[i]);
    plan_.values[resId].firstStep = plan_.values[resId].lastStep = stepIndex;
    ids_[results[i]] = resId;
    step.operands.push_back(resId);
  }
  step.numResults = static_cast<uint32_t>(results.size());

  auto [it, inserted] = symbolCalls_.emplace(kernel->symbol, kernel->call);
  std::vector<int64_t> contract = contractOf(step, kernel->iattrs, kernel->fattrs.size());
  if (inserted) {
    symbols_.push_back(kernel->symbol);
    symbolContracts_[kernel->symbol] = std::move(contract);
  } else if (it->second != kernel->call || symbolContracts_[kernel->symbol] != contract) {
    return opError(op, "internal error: kernel symbol " + kernel->symbol +
                           " names two different instantiations");
  }
  step.kernel = kernel->symbol;
  step.iattrs = kernel->iattrs;
  step.fattrs = kernel->fattrs;
  plan_.steps.push_back(std::move(step));
  return llvm::Error::success();
}

std::vector<int64_t> Generator::contractOf(const PlanStep &step,
                                           const std::vector<int64_t> &iattrs,
                                           size_t numFattrs) const {
  std::vector<int64_t> sig = {static_cast<int64_t>(step.operands.size()), step.numResults,
                              static_cast<int64_t>(iattrs.size()),
                              static_cast<int64_t>(numFattrs)};
  sig.insert(sig.end(), iattrs.begin(), iattrs.end());
  for (uint32_t id : step.operands) {
    const PlanValue &v = plan_.values[id];
    sig.push_back(static_cast<int64_t>(v.dtype));
    sig.push_back(static_cast<int64_t>(v.shape.size()));
    sig.insert(sig.end(), v.shape.begin(), v.shape.end());
  }
  return sig;
}

llvm::Expected<CpuCodegenResult> Generator::run(mlir::ModuleOp module) {
  auto forward = codegen::forwardFunction(module, "cpu codegen");
  if (!forward)
    return forward.takeError();
  mlir::func::FuncOp func = *forward;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Value a = func.getArgument(i);
    auto t = cast<RankedTensorType>(a.getType());
    uint32_t id = addValue(codegen::kForwardArgNames[i], ValueKind::Input, DType::I32, planShape(t));
    ids_[a] = id;
    plan_.inputs.push_back(id);
  }

  planConversionFusion(func);
  packed_ = allowPacked_ && canRunPacked(func);
  mlir::func::ReturnOp ret;
  auto visit = [&](Operation *op) -> llvm::Error {
    if (auto w = dyn_cast<mlir::enc::WeightOp>(op))
      return addWeight(w);
    if (auto r = dyn_cast<mlir::func::ReturnOp>(op)) {
      ret = r;
      return llvm::Error::success();
    }
    if (op->getDialect() == nullptr ||
        op->getDialect()->getNamespace() != mlir::enc::EncDialect::getDialectNamespace())
      return opError(op, "unsupported op (the CPU codegen handles enc ops only)");
    return addStep(op);
  };
  if (auto err = codegen::forEachBodyOp(func, visit, ids_))
    return std::move(err);
  if (!ret)
    return makeError("cpu codegen: @forward has no func.return");
  if (plan_.steps.empty())
    return makeError("cpu codegen: @forward has no compute op");

  const int32_t last = static_cast<int32_t>(plan_.steps.size()) - 1;
  static const char *outNames[] = {"hidden", "pooled"};
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (weightOps_.count(v))
      return opError(ret, "result " + llvm::Twine(i) +
                              " must be computed by an enc op (not an "
                              "argument, a weight or an earlier result)");
    auto it = ids_.find(v);
    if (it == ids_.end())
      return opError(ret, "returns an unknown value");
    PlanValue &pv = plan_.values[it->second];
    if (pv.kind == ValueKind::Activation && pv.dtype != DType::F32)
      return opError(ret, "result " + llvm::Twine(i) + " must be f32");
    if (pv.kind != ValueKind::Activation)
      return opError(ret, "result " + llvm::Twine(i) +
                              " must be computed by an enc op (not an "
                              "argument, a weight or an earlier result)");
    pv.kind = ValueKind::Output;
    pv.name = i < 2 ? outNames[i] : "output" + std::to_string(i);
    pv.lastStep = last;
    plan_.outputs.push_back(it->second);
  }

  CpuCodegenResult result;
  std::ostringstream src;
  src << "// Generated by encc (compiler/codegen/cpu): one exported wrapper per\n"
         "// distinct kernel instantiation; see encrt/kernel_abi.h.\n"
         "#include \"encrt/kernel_abi.h\"\n"
         "#include \"enc_kernels.h\"\n"
      << (usesInt8_ ? "#include \"enc_quant.h\"\n" : "") << "\n"
         "#ifndef ENC_TARGET\n#define ENC_TARGET \"cpu-unknown\"\n#endif\n"
         "#define IN_F(i) static_cast<const float *>(c->buffers[i])\n"
         "#define IN_I(i) static_cast<const int32_t *>(c->buffers[i])\n"
         "#define OUT_F(i) static_cast<float *>(c->buffers[i])\n"
         "#define IN_U8(i) static_cast<const uint8_t *>(c->buffers[i])\n"
         "#define IN_I8(i) static_cast<const int8_t *>(c->buffers[i])\n"
         "#define IN_V(i) static_cast<const void *>(c->buffers[i])\n"
         "#define OUT_U8(i) static_cast<uint8_t *>(c->buffers[i])\n"
         "#define IN_BF(i) static_cast<const uint16_t *>(c->buffers[i])\n"
         "#define OUT_BF(i) static_cast<uint16_t *>(c->buffers[i])\n"
         "#define ENC_KERNEL(name) extern \"C\" "
         "__attribute__((visibility(\"default\"))) void name("
         "const enc_step_ctx *c, int32_t t, int32_t n)\n\n"
         "namespace {\n"
         "inline float fattr(const enc_step_ctx *c, int i, float d) {\n"
         "  return i < c->num_fattrs ? c->fattrs[i] : d;\n}\n"
         "inline int64_t iattr(const enc_step_ctx *c, int i, int64_t d) {\n"
         "  return i < c->num_iattrs ? c->iattrs[i] : d;\n}\n"
         "} // namespace\n\n";
  if (usesInt8_)
    src << "// The int8 GEMM path this object was built with (enc_qgemm.h).\n"
           "extern \"C\" __attribute__((visibility(\"default\"))) const char "
           "*enc_q8_path(void) { return enc_kernels::q8PathName(); }\n\n";
  for (const std::string &sym : symbols_)
    src << "ENC_KERNEL(" << sym << ") {\n  " << symbolCalls_[sym] << "\n}\n";
  // The plan-kernel contract, read by the runtime at load (data only).
  src << "\nnamespace {\n";
  for (size_t k = 0; k < symbols_.size(); ++k) {
    src << "const int64_t kContract" << k << "[] = {";
    for (size_t i = 0; i < symbolContracts_[symbols_[k]].size(); ++i)
      src << (i ? ", " : "") << symbolContracts_[symbols_[k]][i];
    src << "};\n";
  }
  src << "const enc_kernel_contract kContracts[] = {\n";
  for (size_t k = 0; k < symbols_.size(); ++k)
    src << "  {\"" << symbols_[k] << "\", kContract" << k << ", "
        << symbolContracts_[symbols_[k]].size() << "},\n";
  src << "};\n} // namespace\n\n"
         "extern \"C\" __attribute__((visibility(\"default\"))) const enc_code_info_t "
         "enc_code_info = {ENC_KERNEL_ABI_VERSION, ENC_TARGET, "
      << symbols_.size() << ", kContracts};\n";
  result.source = src.str();
  result.plan = std::move(plan_);
  result.packed = packed_;
  return result;
}

//===----------------------------------------------------------------------===//
// Building the shared object
//===----------------------------------------------------------------------===//

/// Runs argv (argv[0] resolved through PATH unless it holds a '/'), with
/// stdout and stderr redirected to files.
llvm::Error runTool(std::vector<std::string> argv, const std::string &outPath,
                    const std::string &errPath) {
  std::string program = argv[0];
  if (program.find('/') == std::string::npos) {
    auto found = llvm::sys::findProgramByName(program);
    if (!found)
      return makeError("cannot find the C++ compiler '" + program +
                       "' in PATH (set CXX to override)");
    program = *found;
  }
  return codegen::runCapturing(program, argv, outPath, errPath, "command");
}

std::vector<std::string> compilerCommand() {
  const char *env = std::getenv("CXX");
  std::vector<std::string> words;
  std::istringstream in(env && *env ? env : "c++");
  for (std::string w; in >> w;)
    words.push_back(w);
  if (words.empty())
    words.push_back("c++");
  return words;
}

/// ISA features the runtime checks for -march=native: from the predefined
/// macros of `$CXX -march=native -E -dM`.
llvm::Expected<std::vector<std::string>> nativeFeatures(const std::string &workDir) {
  std::vector<std::string> argv = compilerCommand();
  for (const char *a : {"-march=native", "-E", "-dM", "-x", "c++", "/dev/null"})
    argv.push_back(a);
  std::string out = workDir + "/native-macros.txt", err = workDir + "/native-macros.log";
  if (auto e = runTool(argv, out, err))
    return std::move(e);
  auto buf = llvm::MemoryBuffer::getFile(out);
  if (!buf)
    return makeError("cannot read " + out);
  llvm::StringRef text = (*buf)->getBuffer();
  static const std::pair<const char *, const char *> kMacros[] = {
      {"__SSE4_2__", "sse4.2"},     {"__POPCNT__", "popcnt"},
      {"__AVX__", "avx"},           {"__AVX2__", "avx2"},
      {"__FMA__", "fma"},           {"__BMI__", "bmi"},
      {"__BMI2__", "bmi2"},         {"__F16C__", "f16c"},
      {"__MOVBE__", "movbe"},       {"__LZCNT__", "lzcnt"},
      {"__AVX512F__", "avx512f"},   {"__AVX512BW__", "avx512bw"},
      {"__AVX512VL__", "avx512vl"}, {"__AVX512DQ__", "avx512dq"},
      {"__AVX512CD__", "avx512cd"}, {"__AVX512VNNI__", "avx512vnni"},
      {"__AVX512BF16__", "avx512bf16"}, {"__AVXVNNI__", "avxvnni"},
      {"__AMX_TILE__", "amx-tile"},     {"__AMX_BF16__", "amx-bf16"},
      {"__AMX_INT8__", "amx-int8"}};
  std::vector<std::string> features;
  for (auto [macro, feature] : kMacros)
    if (text.contains((llvm::Twine("#define ") + macro + " ").str()))
      features.push_back(feature);
  return features;
}

} // namespace

llvm::Error encc::checkCpuLowerable(mlir::ModuleOp module) {
  return codegen::checkLowerable(module, "cpu", &Generator::whyNot);
}

llvm::Expected<CpuCodegenResult>
encc::generateCpuCode(mlir::ModuleOp module, mlir::enc::WeightStore &weights,
                      bool allowPacked) {
  if (auto err = checkCpuLowerable(module))
    return std::move(err);
  return Generator(weights, allowPacked).run(module);
}

llvm::Expected<CpuLevel> encc::parseCpuLevel(llvm::StringRef name) {
  if (name == "x86-64-v2")
    return CpuLevel::X86_64_V2;
  if (name == "x86-64-v3")
    return CpuLevel::X86_64_V3;
  if (name == "x86-64-v4")
    return CpuLevel::X86_64_V4;
  if (name == "x86-64-v3-vnni")
    return CpuLevel::X86_64_V3_VNNI;
  if (name == "x86-64-v4-vnni")
    return CpuLevel::X86_64_V4_VNNI;
  if (name == "x86-64-v4-bf16")
    return CpuLevel::X86_64_V4_BF16;
  if (name == "x86-64-v4-amx")
    return CpuLevel::X86_64_V4_AMX;
  if (name == "native")
    return CpuLevel::Native;
  return makeError("unknown CPU level '" + name +
                   "' (expected x86-64-v2, x86-64-v3, x86-64-v3-vnni, "
                   "x86-64-v4, x86-64-v4-vnni, x86-64-v4-bf16, x86-64-v4-amx or native)");
}

std::string encc::cpuLevelName(CpuLevel level) {
  switch (level) {
  case CpuLevel::X86_64_V2:
    return "x86-64-v2";
  case CpuLevel::X86_64_V3:
    return "x86-64-v3";
  case CpuLevel::X86_64_V4:
    return "x86-64-v4";
  case CpuLevel::X86_64_V3_VNNI:
    return "x86-64-v3-vnni";
  case CpuLevel::X86_64_V4_VNNI:
    return "x86-64-v4-vnni";
  case CpuLevel::X86_64_V4_BF16:
    return "x86-64-v4-bf16";
  case CpuLevel::X86_64_V4_AMX:
    return "x86-64-v4-amx";
  case CpuLevel::Native:
    return "native";
  }
  return "unknown";
}

std::vector<std::string> encc::cpuLevelFeatures(CpuLevel level) {
  std::vector<std::string> features;
  switch (level) {
  case CpuLevel::X86_64_V2:
    features = {"sse4.2", "popcnt"};
    break;
  case CpuLevel::X86_64_V3:
  case CpuLevel::X86_64_V3_VNNI:
    features = {"avx", "avx2", "fma", "bmi", "bmi2", "f16c", "movbe", "lzcnt"};
    if (level == CpuLevel::X86_64_V3_VNNI)
      features.push_back("avxvnni");
    break;
  case CpuLevel::X86_64_V4:
  case CpuLevel::X86_64_V4_VNNI:
  case CpuLevel::X86_64_V4_BF16:
  case CpuLevel::X86_64_V4_AMX:
    features = {"avx", "avx2", "fma", "bmi", "bmi2", "f16c", "movbe",
                "lzcnt", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"};
    if (level == CpuLevel::X86_64_V4_VNNI || level == CpuLevel::X86_64_V4_AMX)
      features.push_back("avx512vnni");
    if (level == CpuLevel::X86_64_V4_BF16 || level == CpuLevel::X86_64_V4_AMX)
      features.push_back("avx512bf16");
    if (level == CpuLevel::X86_64_V4_AMX) {
      features.push_back("amx-tile");
      features.push_back("amx-bf16");
      features.push_back("amx-int8");
    }
    break;
  case CpuLevel::Native:
    break;
  }
  return features;
}

llvm::Expected<CodeObject> encc::buildCpuCodeObject(const std::string &source,
                                                    CpuLevel level,
                                                    const std::string &workDir) {
  const std::string src = workDir + "/model_kernels.cpp";
  const std::string so = workDir + "/model_kernels.so";
  if (auto e = codegen::writeWorkDir(workDir, embeddedKernelFiles(), src, source))
    return std::move(e);

  CodeObject object;
  object.target = "cpu-" + cpuLevelName(level);
  std::vector<std::string> argv = compilerCommand();
  // -nostartfiles: no crti/crtbegin, so the object has no initialisers or
  // finalisers (DT_INIT, .init_array, ...): the runtime refuses any code
  // object that would run code when loaded.
  for (const char *a : {"-O3", "-std=c++17", "-shared", "-fPIC", "-nostartfiles",
                        "-fvisibility=hidden", "-ffp-contract=fast",
                        "-fno-trapping-math", "-fno-math-errno"})
    argv.push_back(a);
  switch (level) {
  case CpuLevel::X86_64_V3_VNNI:
    argv.push_back("-march=x86-64-v3");
    argv.push_back("-mavxvnni");
    break;
  case CpuLevel::X86_64_V4_VNNI:
    argv.push_back("-march=x86-64-v4");
    argv.push_back("-mavx512vnni");
    break;
  case CpuLevel::X86_64_V4_BF16:
    argv.push_back("-march=x86-64-v4");
    argv.push_back("-mavx512bf16");
    break;
  case CpuLevel::X86_64_V4_AMX:
    argv.push_back("-march=x86-64-v4");
    argv.push_back("-mavx512vnni");
    argv.push_back("-mavx512bf16");
    argv.push_back("-mamx-tile");
    argv.push_back("-mamx-bf16");
    argv.push_back("-mamx-int8");
    break;
  default:
    argv.push_back("-march=" + cpuLevelName(level));
  }
  if (level != CpuLevel::Native)
    argv.push_back("-mtune=generic");
  argv.push_back("-DENC_TARGET=\"" + object.target + "\"");
  argv.push_back("-I" + workDir);
  argv.push_back(src);
  argv.push_back("-o");
  argv.push_back(so);
  if (auto e = runTool(argv, workDir + "/compile.out", workDir + "/compile.log"))
    return std::move(e);

  auto buf = llvm::MemoryBuffer::getFile(so, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeError("cannot read the compiled code object " + so);
  object.bytes.assign((*buf)->getBufferStart(), (*buf)->getBufferEnd());

  if (level == CpuLevel::Native) {
    auto f = nativeFeatures(workDir);
    if (!f)
      return f.takeError();
    object.features = std::move(*f);
  } else {
    object.features = cpuLevelFeatures(level);
  }
  return object;
}
