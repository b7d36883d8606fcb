//===- CudaCodegen.cpp - enc IR -> CudaPlan + .cu source ------------------===//
//
// Each compute op becomes one or two CudaPlan steps. Kernel steps name an
// extern "C" __global__ wrapper around one instantiation of a template of
// cuda/kernels/*.cuh (static dims as template arguments); identical
// instantiations share a symbol. Linear layers become "cublaslt" GEMM steps
// (plus a GELU step for the erf form, or a dequantise step for int8).
// Fusions done here: enc.embedding -> enc.layernorm (one step), a per-token
// enc.quantize into the (add_)layernorm / embedding step producing its input,
// enc.pool -> enc.l2norm. The returned hidden state gets a final f32 copy.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/cuda/CudaCodegen.h"
#include "compiler/codegen/OpLowering.h"

#include "encrt/cuda_kernel_abi.h"
#include "ir/EncOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

using namespace encc;
using encc::codegen::locString;
using encc::codegen::makeError;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;
namespace enc = mlir::enc;

namespace {

// Block shapes of the kernel templates (checked again by static_asserts in
// the generated source, so a drift fails at nvcc time).
constexpr int64_t kRowsPerBlock = 4, kRowThreads = 128; // enc_cuda_norm.cuh
constexpr int64_t kElemThreads = 256;                   // enc_cuda_elementwise.cuh
/// enc_cuda::elemVec<N>(): elements per thread of the vectorised elementwise kernels.
int64_t elemVec(int64_t n) { return n % 8 == 0 ? 8 : 1; }
/// The body's check that the launch header's elements per thread match the kernel's.
std::string elemVecAssert(int64_t n) {
  return "static_assert(enc_cuda::elemVec<" + std::to_string(n) + ">() == " +
         std::to_string(elemVec(n)) + ", \"launch header\");\n  ";
}
constexpr int64_t kPoolThreads = 128;                   // enc_cuda_pool.cuh
int64_t attnRowsPerBlock(int64_t d) { return d <= 64 ? 32 : 16; } // AttnConfig<D>::kBQ
constexpr int64_t kAttnMmaRows = 64, kAttnMmaThreads = 128;       // AttnMmaConfig<D>

/// The kernels' template argument for a Linear's epilogue (every value: a new
/// one is a compile warning here, not a silent "none").
const char *epilogueArg(enc::Epilogue epi) {
  switch (epi) {
  case enc::Epilogue::none: return "enc_cuda::kEpiNone";
  case enc::Epilogue::gelu: return "enc_cuda::kEpiGelu";
  case enc::Epilogue::gelu_tanh: return "enc_cuda::kEpiGeluTanh";
  }
  llvm_unreachable("an enc::Epilogue value without a CUDA epilogue");
}

llvm::Error opError(Operation *op, const llvm::Twine &msg) {
  return codegen::opErrorIn("cuda codegen", op, msg);
}

using Shape = std::vector<int64_t>;

std::string cType(DType t, DType act) {
  switch (t) {
  case DType::F32: return "float";
  case DType::I32: return "int32_t";
  case DType::I8: return "int8_t";
  case DType::U8: return "uint8_t";
  case DType::F16: return "__half";
  case DType::BF16: return "__nv_bfloat16";
  }
  return cType(act, act);
}

class Generator {
public:
  Generator(enc::WeightStore &weights, DType act, CudaAttentionKernel attention)
      : weights_(weights), act_(act), actC_(cType(act, act)),
        actTag_(act == DType::F16 ? "f16" : "bf16"), attention_(attention) {}

  llvm::Expected<CudaCodegenResult> run(mlir::ModuleOp module);
  /// "" when this generator can lower `op`, else why not (lowerings()).
  static std::string whyNot(Operation *op) { return lowerings().whyNot(op); }

private:
  using WeightInfo = codegen::WeightInfo;

  // Values ------------------------------------------------------------------
  uint32_t addValue(std::string name, ValueKind kind, DType dtype, Shape shape) {
    return codegen::addPlanValue(plan_, std::move(name), kind, dtype, std::move(shape));
  }
  /// A result of the step about to be emitted; mapped to `v` unless null.
  uint32_t result(Value v, const std::string &name, DType dtype, Shape shape) {
    uint32_t id = addValue(name, ValueKind::Activation, dtype, std::move(shape));
    plan_.values[id].firstStep = plan_.values[id].lastStep = plan_.steps.size();
    if (v)
      ids_[v] = id;
    return id;
  }
  std::string stepName(Operation *op, const char *suffix = "") const {
    return (op ? op->getName().stripDialect().str() : std::string("output")) + "." +
           std::to_string(plan_.steps.size()) + suffix;
  }
  llvm::Error addWeightOp(enc::WeightOp op);
  uint32_t storeValue(const std::string &name);
  /// The plan value of an SSA operand that is an activation or an input.
  llvm::Expected<uint32_t> activation(Operation *user, Value v, DType want, const char *what);
  /// An f32 weight operand, as stored (f32).
  llvm::Expected<uint32_t> f32Weight(Operation *user, Value v, const char *what);
  /// An f32 weight operand converted to the activation dtype ("X.f16").
  llvm::Expected<uint32_t> actWeight(Operation *user, Value v, const char *what);
  /// An i8 weight operand, as stored.
  llvm::Expected<uint32_t> i8Weight(Operation *user, Value v, const char *what);
  llvm::Expected<const WeightInfo *> weightInfo(Operation *user, Value v, const char *what);
  /// weightInfo, checked to be stored as `want` (F32 or I8).
  llvm::Expected<const WeightInfo *> typedWeight(Operation *user, Value v, const char *what,
                                                 DType want);

  // Steps -------------------------------------------------------------------
  llvm::Error emit(Operation *op, std::string opName, std::string kernel, std::string call,
                   int64_t launchThreads, std::vector<uint32_t> operands, uint32_t numResults,
                   std::vector<int64_t> header, std::vector<int64_t> iattrs,
                   std::vector<float> fattrs);
  void planFusions(mlir::func::FuncOp func);
  llvm::Error addOp(Operation *op);
  /// One lowering per op class (OpLoweringTable): adding an op to the CUDA
  /// backend is one method and one line in lowerings().
  using LoweringTable = codegen::OpLoweringTable<Generator, llvm::Error>;
  static const LoweringTable &lowerings();
  /// The ops only the unfused pipeline leaves: an error naming the op.
  llvm::Error needsFusedPipeline(Operation *op);
  llvm::Error addEmbedding(enc::EmbeddingOp op);
  llvm::Error addLayerNorm(Operation *op);
  llvm::Error addQuantize(enc::QuantizeOp op);
  llvm::Error addLinear(enc::LinearOp op);
  llvm::Error addQLinear(enc::QLinearOp op);
  llvm::Error addAttention(enc::AttentionOp op);
  llvm::Error addPool(enc::PoolOp op);
  llvm::Error addElementwise(Operation *op);
  llvm::Error addSplit(enc::SplitOp op);
  /// Static last dim of a per-token result type [?, ?, N].
  llvm::Expected<int64_t> tokenDim(Operation *op, Value v);
  /// Appends the f32 gamma and beta weights of a layernorm to `operands`.
  llvm::Error addGammaBeta(Operation *user, Value gamma, Value beta,
                           std::vector<uint32_t> &operands);
  /// With a fused `quant`: appends its [tokens, H] i8 values and [tokens]
  /// scales as results of the step of `op`, names it in `opName` and returns
  /// its static scale (0 when none or no quant).
  float addFusedQuant(enc::QuantizeOp quant, Operation *op, int64_t H,
                      std::vector<uint32_t> &operands, std::string &opName);
  /// The kernel's quantised outputs (slots numIn + 1, + 2) or two nullptrs.
  std::string quantOuts(bool quant, uint32_t numIn) const {
    return quant ? out(numIn + 1, "int8_t") + ", " + out(numIn + 2, "float")
                 : "nullptr, nullptr";
  }

  std::string in(uint32_t slot, const std::string &type) const {
    return "IN(" + type + ", " + std::to_string(slot) + ")";
  }
  std::string out(uint32_t slot, const std::string &type) const {
    return "OUT(" + type + ", " + std::to_string(slot) + ")";
  }  /// The elementwise GELU kernel over rows of N activations (the step after
  /// a GEMM, or a standalone enc.gelu): its symbol and body.
  std::pair<std::string, std::string> geluKernel(bool tanh, int64_t N) const {
    const std::string n = std::to_string(N);
    return {std::string("enc_cuda_gelu") + (tanh ? "_tanh_" : "_") + actTag_ + "_n" + n,
            elemVecAssert(N) + "enc_cuda::activation<" + actC_ + ", " + n + ", " +
                (tanh ? "enc_cuda::kEpiGeluTanh" : "enc_cuda::kEpiGelu") + ">(a, " + in(0, actC_) +
                ", " + out(1, actC_) + ");"};
  }


  enc::WeightStore &weights_;
  DType act_;
  std::string actC_, actTag_;
  CudaAttentionKernel attention_;
  Plan plan_;
  llvm::DenseMap<Value, uint32_t> ids_;
  llvm::DenseMap<Value, WeightInfo> weightOps_;
  std::map<std::string, uint32_t> weightIds_;
  llvm::DenseMap<Operation *, Operation *> embLayerNorm_; ///< embedding -> its layernorm
  llvm::DenseMap<Operation *, Operation *> fusedQuant_;   ///< producer -> quantize
  llvm::DenseMap<Operation *, Operation *> qlinearNext_;  ///< qlinear -> quantize | add_layernorm
  llvm::DenseMap<Operation *, Operation *> poolNorm_;     ///< pool -> l2norm
  llvm::DenseSet<Operation *> absorbed_;                  ///< ops computed by another step
  std::vector<std::string> symbols_;
  std::map<std::string, std::string> symbolBodies_;
  std::map<std::string, int64_t> symbolThreads_;
};

llvm::Error Generator::addWeightOp(enc::WeightOp op) {
  auto info = codegen::checkWeightOp(op, weights_, "cuda codegen");
  if (!info)
    return info.takeError();
  weightOps_[op.getResult()] = std::move(*info);
  return llvm::Error::success();
}

uint32_t Generator::storeValue(const std::string &name) {
  if (auto it = weightIds_.find(name); it != weightIds_.end())
    return it->second;
  const enc::WeightTensor *w = weights_.find(name);
  uint32_t id = addValue(name, ValueKind::Weight, codegen::planDType(w->type), w->shape);
  weightIds_[name] = id;
  return id;
}

llvm::Expected<const Generator::WeightInfo *>
Generator::weightInfo(Operation *user, Value v, const char *what) {
  auto it = weightOps_.find(v);
  if (it == weightOps_.end())
    return opError(user, llvm::Twine("expects its ") + what +
                             " to be an enc.weight (the GPU layout is made at compile time)");
  return &it->second;
}

llvm::Expected<const Generator::WeightInfo *>
Generator::typedWeight(Operation *user, Value v, const char *what, DType want) {
  auto info = weightInfo(user, v, what);
  if (!info)
    return info.takeError();
  if ((*info)->dtype != want)
    return opError(user, llvm::Twine("expects an ") +
                             (want == DType::I8 ? "i8 " : "f32 ") + what +
                             ", got \"" + (*info)->name + "\"");
  return *info;
}

llvm::Expected<uint32_t> Generator::f32Weight(Operation *user, Value v, const char *what) {
  auto info = typedWeight(user, v, what, DType::F32);
  if (!info)
    return info.takeError();
  return storeValue((*info)->name);
}

llvm::Expected<uint32_t> Generator::i8Weight(Operation *user, Value v, const char *what) {
  auto info = typedWeight(user, v, what, DType::I8);
  if (!info)
    return info.takeError();
  return storeValue((*info)->name);
}

llvm::Expected<uint32_t> Generator::actWeight(Operation *user, Value v, const char *what) {
  auto info = typedWeight(user, v, what, DType::F32);
  if (!info)
    return info.takeError();
  const std::string name = (*info)->name + "." + actTag_;
  if (!weights_.find(name)) {
    const enc::WeightTensor *src = weights_.find((*info)->name);
    weights_.set(name, src->roundedTo(act_ == DType::F16 ? enc::WeightType::F16 : enc::WeightType::BF16));
  }
  return storeValue(name);
}

llvm::Expected<uint32_t> Generator::activation(Operation *user, Value v, DType want,
                                               const char *what) {
  auto it = ids_.find(v);
  if (it == ids_.end())
    return opError(user, llvm::Twine("expects its ") + what +
                             " to be a result of an earlier enc op or an argument");
  const PlanValue &pv = plan_.values[it->second];
  if (pv.dtype != want)
    return opError(user, llvm::Twine("internal error: ") + what + " has the wrong plan dtype");
  return it->second;
}

llvm::Expected<int64_t> Generator::tokenDim(Operation *op, Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() != 3 || !t.isDynamicDim(0) || !t.isDynamicDim(1) ||
      t.isDynamicDim(2) || t.getDimSize(2) < 1)
    return opError(op, "expects per-token tensors [?, ?, N] with a static N");
  return t.getDimSize(2);
}

llvm::Error Generator::addGammaBeta(Operation *user, Value gamma, Value beta,
                                    std::vector<uint32_t> &operands) {
  auto g = f32Weight(user, gamma, "gamma");
  auto b = g ? f32Weight(user, beta, "beta") : g.takeError();
  if (!b)
    return b.takeError();
  operands.push_back(*g);
  operands.push_back(*b);
  return llvm::Error::success();
}

float Generator::addFusedQuant(enc::QuantizeOp quant, Operation *op, int64_t H,
                               std::vector<uint32_t> &operands, std::string &opName) {
  if (!quant)
    return 0.0f;
  opName += "+enc.quantize";
  operands.push_back(result(quant.getValues(), stepName(op, ".q"), DType::I8, {kDimTokens, H}));
  operands.push_back(result(quant.getScales(), stepName(op, ".qs"), DType::F32, {kDimTokens}));
  auto s = quant.getStaticScale();
  return s ? s->convertToFloat() : 0.0f;
}

llvm::Error Generator::emit(Operation *op, std::string opName, std::string kernel,
                            std::string body, int64_t launchThreads,
                            std::vector<uint32_t> operands, uint32_t numResults,
                            std::vector<int64_t> header, std::vector<int64_t> iattrs,
                            std::vector<float> fattrs) {
  if (operands.size() > ENC_CUDA_MAX_BUFFERS || iattrs.size() > ENC_CUDA_MAX_IATTRS ||
      fattrs.size() > ENC_CUDA_MAX_FATTRS || header.size() != ENC_CUDA_LAUNCH_HEADER)
    return opError(op, "internal error: step " + kernel + " exceeds the CUDA kernel ABI");
  const uint32_t index = plan_.steps.size();
  for (size_t i = 0; i + numResults < operands.size(); ++i) {
    PlanValue &v = plan_.values[operands[i]];
    if (v.kind == ValueKind::Activation || v.kind == ValueKind::Output)
      v.lastStep = index;
  }
  if (!body.empty()) {
    auto [it, inserted] = symbolBodies_.emplace(kernel, body);
    if (inserted) {
      symbols_.push_back(kernel);
      symbolThreads_[kernel] = launchThreads;
    } else if (it->second != body) {
      return opError(op, "internal error: kernel symbol " + kernel +
                             " names two different instantiations");
    }
  }
  PlanStep step;
  step.kernel = std::move(kernel);
  step.op = std::move(opName);
  step.operands = std::move(operands);
  step.numResults = numResults;
  step.iattrs = std::move(header);
  step.iattrs.insert(step.iattrs.end(), iattrs.begin(), iattrs.end());
  step.fattrs = std::move(fattrs);
  plan_.steps.push_back(std::move(step));
  return llvm::Error::success();
}

void Generator::planFusions(mlir::func::FuncOp func) {
  // Of the groups enc-form-fusion-groups made, this backend computes each
  // pair below in one step: embedding + LayerNorm (+ quantise), a LayerNorm +
  // quantise, pool + L2 norm, and after an int8 GEMM its dequantisation +
  // quantise or + residual LayerNorm (+ quantise). Other grouped ops get a
  // step each.
  codegen::forEachGroupedPair(func, [&](Operation *producer, Operation *consumer) {
    if (isa<enc::EmbeddingOp>(producer) && isa<enc::LayerNormOp>(consumer)) {
      embLayerNorm_[producer] = consumer;
      absorbed_.insert(consumer);
    } else if (isa<enc::LayerNormOp, enc::AddLayerNormOp>(producer) && isa<enc::QuantizeOp>(consumer) &&
               !fusedQuant_.count(producer)) {
      // The largest fused step, embedding with type ids and an int8 word
      // table + LayerNorm + quantise, has 11 operands (ENC_CUDA_MAX_BUFFERS).
      fusedQuant_[producer] = consumer;
      absorbed_.insert(consumer);
    } else if (isa<enc::QLinearOp>(producer) && isa<enc::QuantizeOp, enc::AddLayerNormOp>(consumer)) {
      // The group's rule: the qlinear's float result has no other user, so
      // the step after its GEMM computes the consumer from the int32 rows.
      qlinearNext_[producer] = consumer;
      absorbed_.insert(consumer);
    } else if (isa<enc::PoolOp>(producer) && isa<enc::L2NormOp>(consumer)) {
      poolNorm_[producer] = consumer;
      absorbed_.insert(consumer);
    }
  });
}

llvm::Error Generator::addEmbedding(enc::EmbeddingOp op) {
  auto H = tokenDim(op, op.getResult());
  if (!H)
    return H.takeError();
  auto ids = activation(op, op.getIds(), DType::I32, "ids");
  if (!ids)
    return ids.takeError();
  std::vector<uint32_t> operands = {*ids};
  const bool typed = static_cast<bool>(op.getTypeIds());
  if (typed) {
    auto typeIds = activation(op, op.getTypeIds(), DType::I32, "type_ids");
    if (!typeIds)
      return typeIds.takeError();
    operands.push_back(*typeIds);
  }
  const uint32_t wordSlot = operands.size();
  const bool q8 = op.isQuantized();
  std::string wt = actC_;
  if (q8) {
    auto w = i8Weight(op, op.getWord(), "int8 word table");
    auto s = w ? f32Weight(op, op.getWordScale(), "word_scale") : w.takeError();
    if (!s)
      return s.takeError();
    operands.push_back(*w);
    operands.push_back(*s);
    wt = "int8_t";
  } else {
    auto w = actWeight(op, op.getWord(), "word table");
    if (!w)
      return w.takeError();
    operands.push_back(*w);
  }
  auto pos = actWeight(op, op.getPos(), "position table");
  auto type = pos ? actWeight(op, op.getTokenType(), "token type table") : pos.takeError();
  if (!type)
    return type.takeError();
  operands.push_back(*pos);
  operands.push_back(*type);
  for (uint32_t id : {operands[wordSlot], *pos, *type})
    if (plan_.values[id].shape.size() != 2 || plan_.values[id].shape[1] != *H)
      return opError(op, "expects embedding tables [rows, " + std::to_string(*H) + "]");
  const int64_t typeRows = plan_.values[*type].shape[0];

  auto lnOp = llvm::dyn_cast_or_null<enc::LayerNormOp>(embLayerNorm_.lookup(op));
  float eps = 0.0f;
  std::string opName = "enc.embedding";
  Value resultValue = op.getResult();
  if (lnOp) {
    if (auto e = addGammaBeta(lnOp, lnOp.getGamma(), lnOp.getBeta(), operands))
      return e;
    eps = lnOp.getEpsilon().convertToFloat();
    opName += "+enc.layernorm";
    resultValue = lnOp.getResult();
  }
  auto quant = lnOp ? llvm::dyn_cast_or_null<enc::QuantizeOp>(fusedQuant_.lookup(lnOp)) : enc::QuantizeOp();
  const uint32_t numIn = operands.size();
  operands.push_back(result(resultValue, stepName(op), act_, {kDimTokens, *H}));
  const float staticScale = addFusedQuant(quant, op, *H, operands, opName);

  uint32_t slot = 1;
  std::string typeIdsArg = typed ? in(slot++, "int32_t") : "nullptr";
  std::string wordArg = in(slot++, wt);
  std::string scaleArg = q8 ? in(slot++, "float") : "nullptr";
  std::string posArg = in(slot++, actC_), typeArg = in(slot++, actC_);
  std::string gArg = lnOp ? in(slot++, "float") : "nullptr";
  std::string bArg = lnOp ? in(slot++, "float") : "nullptr";
  const std::string symbol = "enc_cuda_embedding_" + actTag_ + (q8 ? "_q8word" : "") + "_h" +
                             std::to_string(*H) + (typed ? "_t" + std::to_string(typeRows) : "") +
                             (lnOp ? "_ln" : "") + (quant ? "_q8" : "");
  const std::string body =
      "enc_cuda::embedding<" + actC_ + ", " + wt + ", " + std::to_string(*H) + ", " +
      (lnOp ? "true" : "false") + ", " + (quant ? "true" : "false") + ">(a, " +
      in(0, "int32_t") + ", " + typeIdsArg + ", " + std::to_string(typeRows) + ", " + wordArg + ", " +
      scaleArg + ", " + posArg + ", " + typeArg + ", " + gArg + ", " + bArg + ", " + out(numIn, actC_) + ", " +
      quantOuts(bool(quant), numIn) +
      ", a.iattrs[0], a.iattrs[1], a.fattrs[0], a.fattrs[1]);";
  const uint32_t numResults = operands.size() - numIn;
  return emit(op, opName, symbol, body, kRowThreads, std::move(operands), numResults,
              cudaLaunchHeader(ENC_CUDA_GRID_ROWS, kRowThreads, 0, kRowsPerBlock, 0),
              {static_cast<int64_t>(op.getPositionOffset()),
               op.getPositionPadId() ? static_cast<int64_t>(*op.getPositionPadId()) : int64_t(-1)},
              {eps, staticScale});
}

llvm::Error Generator::addLayerNorm(Operation *op) {
  const bool residual = isa<enc::AddLayerNormOp>(op);
  Value x, res, gamma, beta;
  float eps;
  if (auto ln = dyn_cast<enc::LayerNormOp>(op)) {
    x = ln.getX(), gamma = ln.getGamma(), beta = ln.getBeta();
    eps = ln.getEpsilon().convertToFloat();
  } else {
    auto aln = cast<enc::AddLayerNormOp>(op);
    x = aln.getX(), res = aln.getResidual(), gamma = aln.getGamma(), beta = aln.getBeta();
    eps = aln.getEpsilon().convertToFloat();
  }
  auto H = tokenDim(op, op->getResult(0));
  if (!H)
    return H.takeError();
  std::vector<uint32_t> operands;
  auto xi = activation(op, x, act_, "input");
  if (!xi)
    return xi.takeError();
  operands.push_back(*xi);
  if (residual) {
    auto ri = activation(op, res, act_, "residual");
    if (!ri)
      return ri.takeError();
    operands.push_back(*ri);
  }
  for (uint32_t id : operands)
    if (plan_.values[id].shape != Shape{kDimTokens, *H})
      return opError(op, "expects inputs [tokens, " + std::to_string(*H) + "]");
  if (auto e = addGammaBeta(op, gamma, beta, operands))
    return e;
  const uint32_t numIn = operands.size();
  std::string opName = op->getName().getStringRef().str();
  operands.push_back(result(op->getResult(0), stepName(op), act_, {kDimTokens, *H}));
  auto quant = llvm::dyn_cast_or_null<enc::QuantizeOp>(fusedQuant_.lookup(op));
  const float staticScale = addFusedQuant(quant, op, *H, operands, opName);
  const std::string symbol = std::string("enc_cuda_") + (residual ? "add_" : "") +
                             "layernorm_" + actTag_ + "_h" + std::to_string(*H) +
                             (quant ? "_q8" : "");
  const uint32_t gs = residual ? 2 : 1;
  const std::string body =
      "enc_cuda::layerNorm<" + actC_ + ", " + std::to_string(*H) + ", " +
      (residual ? "true" : "false") + ", " + (quant ? "true" : "false") + ">(a, " +
      in(0, actC_) + ", " + (residual ? in(1, actC_) : "nullptr") + ", " + in(gs, "float") +
      ", " + in(gs + 1, "float") + ", " + out(numIn, actC_) + ", " +
      quantOuts(bool(quant), numIn) +
      ", a.fattrs[0], a.fattrs[1]);";
  const uint32_t numResults = operands.size() - numIn;
  return emit(op, opName, symbol, body, kRowThreads, std::move(operands), numResults,
              cudaLaunchHeader(ENC_CUDA_GRID_ROWS, kRowThreads, 0, kRowsPerBlock, 0), {},
              {eps, staticScale});
}

llvm::Error Generator::addQuantize(enc::QuantizeOp op) {
  auto K = tokenDim(op, op.getX());
  if (!K)
    return K.takeError();
  auto xi = activation(op, op.getX(), act_, "input");
  if (!xi)
    return xi.takeError();
  float staticScale = 0.0f;
  if (auto s = op.getStaticScale())
    staticScale = s->convertToFloat();
  std::vector<uint32_t> operands = {*xi};
  operands.push_back(result(op.getValues(), stepName(op, ".q"), DType::I8, {kDimTokens, *K}));
  operands.push_back(result(op.getScales(), stepName(op, ".qs"), DType::F32, {kDimTokens}));
  const std::string symbol = "enc_cuda_quantize_" + actTag_ + "_k" + std::to_string(*K);
  const std::string body = "enc_cuda::quantize<" + actC_ + ", " + std::to_string(*K) +
                           ">(a, " + in(0, actC_) + ", " + out(1, "int8_t") + ", " +
                           out(2, "float") + ", a.fattrs[0]);";
  return emit(op, "enc.quantize", symbol, body, kRowThreads, std::move(operands), 2,
              cudaLaunchHeader(ENC_CUDA_GRID_ROWS, kRowThreads, 0, kRowsPerBlock, 0), {},
              {staticScale});
}

llvm::Error Generator::addLinear(enc::LinearOp op) {
  auto N = tokenDim(op, op.getResult());
  auto K = N ? tokenDim(op, op.getX()) : N.takeError();
  if (!K)
    return K.takeError();
  auto x = activation(op, op.getX(), act_, "input");
  auto w = x ? actWeight(op, op.getWeight(), "weight") : x.takeError();
  if (!w)
    return w.takeError();
  if (plan_.values[*w].shape != Shape{*N, *K})
    return opError(op, "expects a weight [" + std::to_string(*N) + ", " + std::to_string(*K) + "]");
  std::vector<uint32_t> operands = {*x, *w};
  const bool bias = static_cast<bool>(op.getBias());
  if (bias) {
    auto b = actWeight(op, op.getBias(), "bias");
    if (!b)
      return b.takeError();
    operands.push_back(*b);
  }
  const enc::Epilogue epi = op.getEpilogue();
  // cuBLASLt: 0 none, 1 bias, 2 bias + GELU (tanh form). Anything else runs
  // its activation as a separate step.
  int64_t gemmEpi = bias ? 1 : 0;
  bool actStep = epi != enc::Epilogue::none;
  if (bias && epi == enc::Epilogue::gelu_tanh)
    gemmEpi = 2, actStep = false;
  Value gemmResult = actStep ? Value() : op.getResult();
  uint32_t y = result(gemmResult, stepName(op, actStep ? ".gemm" : ""), act_, {kDimTokens, *N});
  operands.push_back(y);
  if (auto err = emit(op, "enc.linear", ENC_CUDA_GEMM_KERNEL, "", 0, std::move(operands), 1,
                      cudaLaunchHeader(ENC_CUDA_GRID_GEMM, 0, 0, 0, 0), {*N, *K, gemmEpi}, {}))
    return err;
  if (!actStep)
    return llvm::Error::success();
  const bool tanh = epi == enc::Epilogue::gelu_tanh;
  std::vector<uint32_t> actOperands = {
      y, result(op.getResult(), stepName(op), act_, {kDimTokens, *N})};
  auto [symbol, body] = geluKernel(tanh, *N);
  return emit(op, "enc.linear", symbol, body, kElemThreads, std::move(actOperands), 1,
              cudaLaunchHeader(ENC_CUDA_GRID_ELEMENTS, kElemThreads, 0,
                               kElemThreads * elemVec(*N), *N),
              {}, {});
}

llvm::Error Generator::addQLinear(enc::QLinearOp op) {
  auto N = tokenDim(op, op.getResult());
  if (!N)
    return N.takeError();
  auto x = activation(op, op.getX(), DType::I8, "quantised input");
  auto xs = x ? activation(op, op.getXScale(), DType::F32, "input scales") : x.takeError();
  auto w = xs ? i8Weight(op, op.getWeight(), "weight") : xs.takeError();
  auto ws = w ? f32Weight(op, op.getWScale(), "weight scales") : w.takeError();
  if (!ws)
    return ws.takeError();
  const Shape &wShape = plan_.values[*w].shape;
  const int64_t K = wShape.size() == 2 ? wShape[1] : -1;
  if (wShape.size() != 2 || wShape[0] != *N || plan_.values[*x].shape != Shape{kDimTokens, K})
    return opError(op, "expects a weight [" + std::to_string(*N) + ", K] matching the input");
  if (K % 4 != 0)
    return opError(op, "the int8 GEMM needs K % 4 == 0, got K = " + std::to_string(K));
  if (plan_.values[*ws].shape != Shape{*N})
    return opError(op, "expects weight scales [" + std::to_string(*N) + "]");
  const enc::Epilogue epi = op.getEpilogue();
  uint32_t acc = result(Value(), stepName(op, ".acc"), DType::I32, {kDimTokens, *N});
  if (auto err = emit(op, "enc.qlinear", ENC_CUDA_GEMM_KERNEL, "", 0, {*x, *w, acc}, 1,
                      cudaLaunchHeader(ENC_CUDA_GRID_GEMM, 0, 0, 0, 0), {*N, K, 0}, {}))
    return err;
  std::vector<uint32_t> operands = {acc, *xs, *ws};
  const bool bias = static_cast<bool>(op.getBias());
  if (bias) {
    auto b = f32Weight(op, op.getBias(), "bias");
    if (!b)
      return b.takeError();
    operands.push_back(*b);
  }
  const std::string epiArg = epilogueArg(epi);
  const std::string nameTail = std::string(bias ? "" : "_nobias") +
                               (epi == enc::Epilogue::none ? "" : "_" + enc::stringifyEpilogue(epi).str());
  const std::string dequantArgs = in(0, "int32_t") + ", " + in(1, "float") + ", " + in(2, "float") +
                                  ", " + (bias ? in(3, "float") : "nullptr");
  const std::string Ns = std::to_string(*N);
  Operation *next = qlinearNext_.lookup(op);
  if (auto quant = llvm::dyn_cast_or_null<enc::QuantizeOp>(next)) {
    // Dequantise + quantise per row: the float rows are never stored.
    std::string opName = "enc.qlinear";
    const uint32_t numIn = operands.size();
    const float staticScale = addFusedQuant(quant, op, *N, operands, opName);
    const int64_t rows = *N > 1024 ? 1 : kRowsPerBlock; // enc_cuda::qlinearQuantizeRows<N>()
    const std::string body = "static_assert(enc_cuda::qlinearQuantizeRows<" + Ns + ">() == " +
                             std::to_string(rows) + ", \"launch header\");\n  " +
                             "enc_cuda::qlinearQuantize<" + Ns + ", " + epiArg + ", " +
                             (bias ? "true" : "false") + ">(a, " + dequantArgs + ", " +
                             out(numIn, "int8_t") + ", " + out(numIn + 1, "float") + ", a.fattrs[0]);";
    return emit(op, opName, "enc_cuda_qlinear_quantize_n" + Ns + nameTail, body, kRowThreads,
                std::move(operands), 2,
                cudaLaunchHeader(ENC_CUDA_GRID_ROWS, kRowThreads, 0, rows, 0), {}, {staticScale});
  }
  if (auto ln = llvm::dyn_cast_or_null<enc::AddLayerNormOp>(next)) {
    // Dequantise + residual + LayerNorm (+ quantise) per row.
    auto res = activation(ln, ln.getResidual(), act_, "residual");
    if (!res)
      return res.takeError();
    if (plan_.values[*res].shape != Shape{kDimTokens, *N})
      return opError(ln, "expects a residual [tokens, " + Ns + "]");
    operands.push_back(*res);
    if (auto e = addGammaBeta(ln, ln.getGamma(), ln.getBeta(), operands))
      return e;
    const uint32_t numIn = operands.size();
    std::string opName = "enc.qlinear+enc.add_layernorm";
    operands.push_back(result(ln.getResult(), stepName(ln), act_, {kDimTokens, *N}));
    auto quant = llvm::dyn_cast_or_null<enc::QuantizeOp>(fusedQuant_.lookup(ln));
    const float staticScale = addFusedQuant(quant, ln, *N, operands, opName);
    const uint32_t r = bias ? 4 : 3;
    const std::string body =
        "enc_cuda::qlinearAddLayerNorm<" + actC_ + ", " + Ns + ", " + epiArg + ", " +
        (bias ? "true" : "false") + ", " + (quant ? "true" : "false") + ">(a, " + dequantArgs +
        ", " + in(r, actC_) + ", " + in(r + 1, "float") + ", " + in(r + 2, "float") + ", " +
        out(numIn, actC_) + ", " + quantOuts(bool(quant), numIn) + ", a.fattrs[0], a.fattrs[1]);";
    const uint32_t numResults = operands.size() - numIn;
    return emit(op, opName, "enc_cuda_qlinear_add_layernorm_" + actTag_ + "_h" + Ns + nameTail +
                                (quant ? "_q8" : ""),
                body, kRowThreads, std::move(operands), numResults,
                cudaLaunchHeader(ENC_CUDA_GRID_ROWS, kRowThreads, 0, kRowsPerBlock, 0), {},
                {ln.getEpsilon().convertToFloat(), staticScale});
  }
  const uint32_t outSlot = operands.size();
  operands.push_back(result(op.getResult(), stepName(op), act_, {kDimTokens, *N}));
  const std::string symbol = "enc_cuda_dequantize_" + actTag_ + "_n" + Ns + nameTail;
  const std::string body = elemVecAssert(*N) + "enc_cuda::dequantize<" + actC_ + ", " + Ns + ", " +
                           epiArg + ", " + (bias ? "true" : "false") + ">(a, " + dequantArgs + ", " +
                           out(outSlot, actC_) + ");";
  return emit(op, "enc.qlinear", symbol, body, kElemThreads, std::move(operands), 1,
              cudaLaunchHeader(ENC_CUDA_GRID_ELEMENTS, kElemThreads, 0,
                               kElemThreads * elemVec(*N), *N),
              {}, {});
}

/// The attention forms the CUDA kernels do not have (checked before any code
/// is generated).
std::string whyNotAttention(enc::AttentionOp op) {
  if (op.getBf16Pv())
    return "bf16_pv is a CPU attention variant (enc-convert-attention-bf16); the CUDA kernel computes p·v in "
           "its --cuda-dtype";
  if (op.getResult().getType().getElementType().isBF16())
    return "a bf16 result (enc-convert-linear-bf16) is a CPU form; the CUDA kernel writes its --cuda-dtype";
  if (op.getPositionBias())
    return "a relative position bias (MPNet) is implemented by the CPU attention kernel only; compile this "
           "model for the CPU";
  if (op.getAlibi())
    return "ALiBi (alibi) is implemented by the CPU attention kernel only; compile this model for the CPU";
  if (op.getWindow() || op.getCausal())
    return "a sliding window or causal mask has no CUDA kernel yet; compile this model for the CPU";
  if (op.kvHeads() != static_cast<int64_t>(op.getNumHeads()))
    return "grouped key/value heads (num_kv_heads) have no CUDA kernel yet; compile this model for the CPU";
  switch (op.getPadding()) {
  case enc::Padding::right: return "";
  case enc::Padding::left: return "padding left is not implemented (only right)";
  }
  return "";
}

/// The CUDA linear runs on per-token rows [B, S, N]; a Linear on pooled rows
/// (sentence-transformers' Dense modules after the pooling) has no kernel.
std::string whyNotLinear(enc::LinearOp op) {
  auto t = dyn_cast<RankedTensorType>(op.getResult().getType());
  if (t && t.getRank() == 2)
    return "a Linear on the pooled embedding (sentence-transformers' Dense modules) has no CUDA kernel yet; "
           "compile this model for the CPU";
  return "";
}

/// The pooling modes the CUDA pool kernel has.
std::string whyNotPool(enc::PoolOp op) {
  switch (op.getMode()) {
  case enc::PoolingMode::cls:
  case enc::PoolingMode::mean: return "";
  case enc::PoolingMode::last:
    return "pooling last has no CUDA kernel yet (compile this model with --target=cpu)";
  case enc::PoolingMode::splade:
    return "pooling splade has no CUDA kernel yet (compile this model with --target=cpu)";
  }
  return "";
}

/// The ops only the unfused pipeline leaves.
std::string needsFusedPipelineReason(Operation *) {
  return "needs the fused pipeline (the CUDA backend has no kernel for the unfused form)";
}

llvm::Error Generator::addAttention(enc::AttentionOp op) {
  auto H = tokenDim(op, op.getResult());
  if (!H)
    return H.takeError();
  const int64_t NH = static_cast<int64_t>(op.getNumHeads());
  if (NH < 1 || *H % NH != 0)
    return opError(op, "expects a hidden size divisible by num_heads");
  const int64_t D = *H / NH;
  if (D % 4 != 0 || D > 128)
    return opError(op, "the CUDA attention kernel needs a head dim that is a multiple of 4 "
                       "and <= 128, got " + std::to_string(D));
  bool tensorCores = false;
  switch (attention_) {
  case CudaAttentionKernel::Auto: tensorCores = D % 16 == 0; break;
  case CudaAttentionKernel::CudaCores: tensorCores = false; break;
  case CudaAttentionKernel::TensorCores:
    if (D % 16 != 0)
      return opError(op, "--cuda-attention=tensor-cores needs a head dim that is a multiple of 16, "
                         "got " + std::to_string(D) + " (use auto or cuda-cores)");
    tensorCores = true;
    break;
  }
  const bool packed = op.isPacked();
  std::vector<uint32_t> operands;
  for (Value v : op.getInputs()) {
    auto id = activation(op, v, act_, "q/k/v input");
    if (!id)
      return id.takeError();
    if (plan_.values[*id].shape != Shape{kDimTokens, packed ? 3 * *H : *H})
      return opError(op, "expects inputs [tokens, " + std::to_string(packed ? 3 * *H : *H) + "]");
    operands.push_back(*id);
  }
  const uint32_t numIn = operands.size();
  operands.push_back(result(op.getResult(), stepName(op), act_, {kDimTokens, *H}));
  const int64_t bq = tensorCores ? kAttnMmaRows : attnRowsPerBlock(D),
                threads = tensorCores ? kAttnMmaThreads : 4 * bq, ld = packed ? 3 * *H : *H;
  const std::string Hs = std::to_string(*H);
  const std::string symbol = std::string("enc_cuda_attention") + (tensorCores ? "_mma" : "") +
                             (packed ? "_packed_" : "_") + actTag_ + "_h" + std::to_string(NH) +
                             "_d" + std::to_string(D);
  const std::string config = std::string(tensorCores ? "AttnMmaConfig<" : "AttnConfig<") +
                             std::to_string(D) + ">";
  const std::string body =
      "static_assert(enc_cuda::" + config + "::kThreads == " + std::to_string(threads) +
      " && enc_cuda::" + config + "::kBQ == " + std::to_string(bq) +
      ", \"launch header\");\n  enc_cuda::" + (tensorCores ? "attentionMma<" : "attention<") +
      actC_ + ", " +
      std::to_string(D) + ", " + std::to_string(NH) + ", " + std::to_string(ld) + ">(a, " +
      (packed ? in(0, actC_) + ", " + in(0, actC_) + " + " + Hs + ", " + in(0, actC_) +
                    " + 2 * " + Hs
              : in(0, actC_) + ", " + in(1, actC_) + ", " + in(2, actC_)) +
      ", " + out(numIn, actC_) + ", a.fattrs[0]);";
  return emit(op, "enc.attention", symbol, body, threads, std::move(operands), 1,
              cudaLaunchHeader(ENC_CUDA_GRID_SEQ_HEAD_TILE, threads, 0, bq, NH), {},
              {op.getScale().convertToFloat()});
}

llvm::Error Generator::addPool(enc::PoolOp op) {
  const enc::PoolingMode mode = op.getMode();
  auto H = tokenDim(op, op.getX());
  if (!H)
    return H.takeError();
  auto x = activation(op, op.getX(), act_, "input");
  if (!x)
    return x.takeError();
  auto norm = llvm::dyn_cast_or_null<enc::L2NormOp>(poolNorm_.lookup(op));
  Value resultValue = norm ? norm.getResult() : op.getResult();
  std::vector<uint32_t> operands = {*x,
                                    result(resultValue, stepName(op), DType::F32, {kDimBatch, *H})};
  const std::string symbol = "enc_cuda_pool_" + enc::stringifyPoolingMode(mode).str() + (norm ? "_l2norm_" : "_") +
                             actTag_ + "_h" + std::to_string(*H);
  std::string modeArg;
  switch (mode) {
  case enc::PoolingMode::cls: modeArg = "enc_cuda::kPoolCls"; break;
  case enc::PoolingMode::mean: modeArg = "enc_cuda::kPoolMean"; break;
  case enc::PoolingMode::last:
  case enc::PoolingMode::splade: return opError(op, whyNotPool(op)); // refused by the check first
  }
  const std::string body = "enc_cuda::pool<" + actC_ + ", " + std::to_string(*H) + ", " + modeArg +
                           ", " + (norm ? "true" : "false") + ">(a, " + in(0, actC_) + ", " +
                           out(1, "float") + ");";
  return emit(op, norm ? "enc.pool+enc.l2norm" : "enc.pool", symbol, body, kPoolThreads,
              std::move(operands), 1,
              cudaLaunchHeader(ENC_CUDA_GRID_BATCH, kPoolThreads, 0, 1, 0), {}, {});
}

llvm::Error Generator::addSplit(enc::SplitOp op) {
  const int64_t parts = static_cast<int64_t>(op.getParts());
  if (parts < 1 || parts + 1 > ENC_CUDA_MAX_BUFFERS ||
      static_cast<int64_t>(op->getNumResults()) != parts)
    return opError(op, "expects 1 to " + std::to_string(ENC_CUDA_MAX_BUFFERS - 1) +
                           " parts, one result each");
  auto N = tokenDim(op, op->getResult(0));
  if (!N)
    return N.takeError();
  auto x = activation(op, op.getX(), act_, "input");
  if (!x)
    return x.takeError();
  if (plan_.values[*x].shape != Shape{kDimTokens, parts * *N})
    return opError(op, "expects an input [tokens, parts x N]");
  std::vector<uint32_t> operands = {*x};
  for (int64_t i = 0; i < parts; ++i)
    operands.push_back(result(op->getResult(i), stepName(op, ("." + std::to_string(i)).c_str()),
                              act_, {kDimTokens, *N}));
  const std::string symbol = "enc_cuda_split_" + actTag_ + "_n" + std::to_string(*N) + "_p" +
                             std::to_string(parts);
  const std::string body = "enc_cuda::split<" + actC_ + ", " + std::to_string(*N) + ", " +
                           std::to_string(parts) + ">(a, " + in(0, actC_) + ", a.buffers + 1);";
  return emit(op, "enc.split", symbol, body, kElemThreads, std::move(operands),
              static_cast<uint32_t>(parts),
              cudaLaunchHeader(ENC_CUDA_GRID_ELEMENTS, kElemThreads, 0, kElemThreads, parts * *N),
              {}, {});
}

llvm::Error Generator::addElementwise(Operation *op) {
  // enc.add, enc.scale, enc.div, enc.gelu on per-token activations; enc.l2norm
  // on pooled rows (when not fused into enc.pool).
  if (auto n = dyn_cast<enc::L2NormOp>(op)) {
    auto x = activation(op, n.getX(), DType::F32, "input");
    if (!x)
      return x.takeError();
    const Shape shape = plan_.values[*x].shape;
    if (shape.size() != 2 || shape[0] != kDimBatch || shape[1] < 1)
      return opError(op, "expects pooled rows [batch, H] (the output of enc.pool)");
    std::vector<uint32_t> operands = {*x, result(n.getResult(), stepName(op), DType::F32, shape)};
    const std::string symbol = "enc_cuda_l2norm_h" + std::to_string(shape[1]);
    const std::string body = "enc_cuda::l2Norm<" + std::to_string(shape[1]) + ">(a, " +
                             in(0, "float") + ", " + out(1, "float") + ");";
    return emit(op, "enc.l2norm", symbol, body, kPoolThreads, std::move(operands), 1,
                cudaLaunchHeader(ENC_CUDA_GRID_BATCH, kPoolThreads, 0, 1, 0), {}, {});
  }
  auto N = tokenDim(op, op->getResult(0));
  if (!N)
    return N.takeError();
  std::vector<uint32_t> operands;
  for (Value v : op->getOperands()) {
    auto id = activation(op, v, act_, "input");
    if (!id)
      return id.takeError();
    if (plan_.values[*id].shape != Shape{kDimTokens, *N})
      return opError(op, "expects per-token inputs of the result's shape (no broadcasting)");
    operands.push_back(*id);
  }
  operands.push_back(result(op->getResult(0), stepName(op), act_, {kDimTokens, *N}));
  const std::string n = std::to_string(*N);
  std::string symbol, body;
  std::vector<float> fattrs;
  if (isa<enc::AddOp>(op)) {
    symbol = "enc_cuda_add_" + actTag_ + "_n" + n;
    body = "enc_cuda::add<" + actC_ + ", " + n + ">(a, " + in(0, actC_) + ", " + in(1, actC_) +
           ", " + out(2, actC_) + ");";
  } else if (isa<enc::ScaleOp, enc::DivOp>(op)) {
    float factor = 1.0f;
    if (auto s = dyn_cast<enc::ScaleOp>(op))
      factor = s.getFactor().convertToFloat();
    else
      factor = 1.0f / cast<enc::DivOp>(op).getDivisor().convertToFloat();
    fattrs = {factor};
    symbol = "enc_cuda_scale_" + actTag_ + "_n" + n;
    body = "enc_cuda::scale<" + actC_ + ", " + n + ">(a, " + in(0, actC_) + ", " +
           out(1, actC_) + ", a.fattrs[0]);";
  } else if (auto g = dyn_cast<enc::GeluOp>(op)) {
    std::tie(symbol, body) = geluKernel(g.getApproximate() == enc::GeluApproximation::tanh, *N);
  } else {
    return opError(op, "unsupported op (the CUDA codegen has no kernel for it)");
  }
  const uint32_t numResults = 1;
  const int64_t perThread = isa<enc::GeluOp>(op) ? elemVec(*N) : 1;
  return emit(op, op->getName().getStringRef().str(), symbol, body, kElemThreads,
              std::move(operands), numResults,
              cudaLaunchHeader(ENC_CUDA_GRID_ELEMENTS, kElemThreads, 0, kElemThreads * perThread,
                               *N),
              {}, fattrs);
}

const Generator::LoweringTable &Generator::lowerings() {
  static const LoweringTable table = [] {
    LoweringTable t;
    t.add(&Generator::addEmbedding)
        .addAll<enc::LayerNormOp, enc::AddLayerNormOp>(&Generator::addLayerNorm)
        .add(&Generator::addQuantize)
        .add(&Generator::addLinear)
        .add(&Generator::addQLinear)
        .add(&Generator::addAttention)
        .add(&Generator::addPool)
        .add(&Generator::addSplit)
        .addAll<enc::AddOp, enc::ScaleOp, enc::DivOp, enc::GeluOp, enc::L2NormOp>(
            &Generator::addElementwise)
        .addAll<enc::MatmulOp, enc::SplitHeadsOp, enc::MergeHeadsOp, enc::MaskOp, enc::SoftmaxOp,
                enc::ScaleMaskSoftmaxOp>(&Generator::needsFusedPipeline)
        .check(&whyNotAttention)
        .check(&whyNotLinear)
        .check(&whyNotPool)
        .checkAll<enc::MatmulOp, enc::SplitHeadsOp, enc::MergeHeadsOp, enc::MaskOp, enc::SoftmaxOp,
                  enc::ScaleMaskSoftmaxOp>(&needsFusedPipelineReason);
    return t;
  }();
  return table;
}

llvm::Error Generator::needsFusedPipeline(Operation *op) {
  return opError(op, needsFusedPipelineReason(op)); // refused by the check first
}

llvm::Error Generator::addOp(Operation *op) {
  if (absorbed_.count(op))
    return llvm::Error::success();
  const LoweringTable::Fn *lower = lowerings().lookup(op);
  if (!lower)
    return opError(op, "unsupported op (the CUDA codegen has no kernel for it)");
  return (*lower)(*this, op);
}

llvm::Expected<CudaCodegenResult> Generator::run(mlir::ModuleOp module) {
  auto forward = codegen::forwardFunction(module, "cuda codegen");
  if (!forward)
    return forward.takeError();
  mlir::func::FuncOp func = *forward;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Value a = func.getArgument(i);
    uint32_t id = addValue(codegen::kForwardArgNames[i], ValueKind::Input, DType::I32,
                           i == 1 ? Shape{kDimBatch} : Shape{kDimBatch, kDimSeq});
    ids_[a] = id;
    plan_.inputs.push_back(id);
  }

  planFusions(func);
  mlir::func::ReturnOp ret;
  auto visit = [&](Operation *op) -> llvm::Error {
    if (auto w = dyn_cast<enc::WeightOp>(op))
      return addWeightOp(w);
    if (auto r = dyn_cast<mlir::func::ReturnOp>(op)) {
      ret = r;
      return llvm::Error::success();
    }
    if (!op->getDialect() || op->getDialect()->getNamespace() != enc::EncDialect::getDialectNamespace())
      return opError(op, "unsupported op (the CUDA codegen handles enc ops only)");
    return addOp(op);
  };
  if (auto err = codegen::forEachBodyOp(func, visit, ids_))
    return err;
  if (!ret)
    return makeError("cuda codegen: @forward has no func.return");
  if (ret.getNumOperands() < 1 || ret.getNumOperands() > 2)
    return opError(ret, "expects (hidden) or (hidden, pooled) results");
  if (plan_.steps.empty())
    return makeError("cuda codegen: @forward has no compute op");

  // hidden: the per-token activation, copied to f32 by a last step.
  Value hiddenValue = ret.getOperand(0);
  auto hidden = ids_.find(hiddenValue);
  if (hidden == ids_.end() || plan_.values[hidden->second].kind != ValueKind::Activation ||
      plan_.values[hidden->second].dtype != act_ ||
      plan_.values[hidden->second].shape.size() != 2)
    return opError(ret, "result 0 must be the per-token hidden state computed by an enc op");
  const int64_t H = plan_.values[hidden->second].shape[1];
  {
    std::vector<uint32_t> operands = {hidden->second};
    operands.push_back(result(Value(), "hidden", DType::F32, {kDimTokens, H}));
    const std::string symbol = "enc_cuda_to_f32_" + actTag_ + "_n" + std::to_string(H);
    const std::string body = "enc_cuda::toFloat<" + actC_ + ", " + std::to_string(H) +
                             ">(a, " + in(0, actC_) + ", " + out(1, "float") + ");";
    if (auto err = emit(ret, "output", symbol, body, kElemThreads, operands, 1,
                        cudaLaunchHeader(ENC_CUDA_GRID_ELEMENTS, kElemThreads, 0, kElemThreads, H),
                        {}, {}))
      return err;
    plan_.values[operands[1]].kind = ValueKind::Output;
    plan_.outputs.push_back(operands[1]);
  }
  const int32_t last = static_cast<int32_t>(plan_.steps.size()) - 1;
  if (ret.getNumOperands() == 2) {
    auto pooled = ids_.find(ret.getOperand(1));
    if (pooled == ids_.end() || plan_.values[pooled->second].kind != ValueKind::Activation ||
        plan_.values[pooled->second].dtype != DType::F32 ||
        plan_.values[pooled->second].shape != Shape{kDimBatch, H})
      return opError(ret, "result 1 must be the pooled f32 [batch, H] computed by enc.pool");
    PlanValue &pv = plan_.values[pooled->second];
    pv.kind = ValueKind::Output;
    pv.name = "pooled";
    pv.lastStep = last;
    plan_.outputs.push_back(pooled->second);
  }
  plan_.values[plan_.outputs[0]].lastStep = last;

  std::ostringstream src;
  src << "// Generated by encc (compiler/codegen/cuda): one extern \"C\" __global__\n"
         "// kernel per distinct instantiation; see encrt/cuda_kernel_abi.h.\n"
         "#include \"encrt/cuda_kernel_abi.h\"\n"
         "#include \"enc_cuda_kernels.cuh\"\n\n"
         "#define IN(T, i) static_cast<const T *>(a.buffers[i])\n"
         "#define OUT(T, i) static_cast<T *>(a.buffers[i])\n\n"
         "static_assert(ENC_CUDA_ABI_VERSION == 2, \"cuda kernel ABI\");\n"
         "static_assert(enc_cuda::kRowsPerBlock == "
      << kRowsPerBlock << " && enc_cuda::kRowThreads == " << kRowThreads
      << ", \"launch header\");\n"
         "static_assert(enc_cuda::kElemThreads == "
      << kElemThreads << " && enc_cuda::kPoolThreads == " << kPoolThreads
      << ", \"launch header\");\n\n";
  for (const std::string &sym : symbols_)
    src << "extern \"C\" __global__ void __launch_bounds__(" << symbolThreads_[sym] << ") "
        << sym << "(enc_cuda_args a) {\n  " << symbolBodies_[sym] << "\n}\n";
  CudaCodegenResult result;
  result.source = src.str();
  result.plan = std::move(plan_);
  return result;
}

} // namespace

std::vector<int64_t> encc::cudaLaunchHeader(int64_t gridKind, int64_t threads,
                                            int64_t dynamicSmem, int64_t p0, int64_t p1) {
  return {gridKind, threads, dynamicSmem, p0, p1};
}

llvm::Expected<CudaAttentionKernel> encc::parseCudaAttentionKernel(llvm::StringRef name) {
  if (name == "auto")
    return CudaAttentionKernel::Auto;
  if (name == "tensor-cores")
    return CudaAttentionKernel::TensorCores;
  if (name == "cuda-cores")
    return CudaAttentionKernel::CudaCores;
  return makeError("--cuda-attention expects auto, tensor-cores or cuda-cores, got '" + name.str() +
                   "'");
}

llvm::Error encc::checkCudaLowerable(mlir::ModuleOp module) {
  return codegen::checkLowerable(module, "cuda", &Generator::whyNot);
}

llvm::Expected<CudaCodegenResult> encc::generateCudaCode(mlir::ModuleOp module,
                                                         mlir::enc::WeightStore &weights,
                                                         const CudaCodegenOptions &options) {
  if (options.dtype != DType::F16 && options.dtype != DType::BF16)
    return makeError("cuda codegen: the activation dtype must be F16 or BF16");
  if (auto err = checkCudaLowerable(module))
    return std::move(err);
  return Generator(weights, options.dtype, options.attention).run(module);
}
