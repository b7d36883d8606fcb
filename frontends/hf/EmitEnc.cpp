//===- EmitEnc.cpp - ModelConfig -> enc dialect @forward ------------------===//
//
// Emits the post-LayerNorm encoder of BERT/RoBERTa/DistilBERT with the enc
// builders: weights first (one enc.weight per tensor), then embeddings,
// the layers and the optional pooling. Ops are located by the name of the
// HF module they come from, e.g. loc("encoder.layer.0.attention.self.query").
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/HFImport.h"
#include "frontends/hf/HFUtil.h"
#include "ir/EncDialect.h"
#include "ir/EncOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace encc;
using namespace mlir;

namespace {

class Emitter {
public:
  Emitter(MLIRContext &ctx, const ModelConfig &c, const std::string &source)
      : b(&ctx), c(c), fileLoc(FileLineColLoc::get(&ctx, source, 0, 0)) {}

  Location loc(const std::string &name) { return NameLoc::get(b.getStringAttr(name), fileLoc); }
  Type f32() { return b.getF32Type(); }
  /// tensor<?x?xNxf32>
  RankedTensorType bsn(int64_t n) {
    return RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, n}, f32());
  }
  /// tensor<?xheadsx?xNxf32>
  RankedTensorType bhsn(int64_t n) {
    return RankedTensorType::get({ShapedType::kDynamic, c.heads, ShapedType::kDynamic, n}, f32());
  }

  Value w(const std::string &name) { return weights.lookup(name); }

  Value linear(Value x, const std::string &mod, int64_t n) {
    return b.create<enc::LinearOp>(loc(mod), bsn(n), x, w(mod + ".weight"), w(mod + ".bias"),
                                   "none");
  }
  Value layernorm(Value x, const std::string &mod) {
    return b.create<enc::LayerNormOp>(loc(mod), x.getType(), x, w(mod + ".weight"),
                                      w(mod + ".bias"), b.getF32FloatAttr(float(c.layerNormEps)));
  }

  OwningOpRef<ModuleOp> build() {
    ModuleOp module = ModuleOp::create(fileLoc);
    b.setInsertionPointToEnd(module.getBody());
    auto idsTy =
        RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic}, b.getI32Type());
    auto lenTy = RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
    auto pooledTy = RankedTensorType::get({ShapedType::kDynamic, c.hidden}, f32());
    SmallVector<Type> results{bsn(c.hidden)};
    if (c.pooling != "none")
      results.push_back(pooledTy);
    auto func = b.create<func::FuncOp>(loc("forward"), "forward",
                                       b.getFunctionType({idsTy, lenTy}, results));
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value ids = entry->getArgument(0), lengths = entry->getArgument(1);

    for (const WeightSpec &s : expectedWeights(c)) {
      auto ty = RankedTensorType::get(s.shape, f32());
      std::string mod = s.name.substr(0, s.name.rfind('.'));
      weights[s.name] = b.create<enc::WeightOp>(loc(mod), ty, s.name);
    }

    ModelWeightNames n = modelWeightNames(c);
    int64_t headDim = c.hidden / c.heads;
    Value x = b.create<enc::EmbeddingOp>(loc("embeddings"), bsn(c.hidden), ids,
                                         w(n.word + ".weight"), w(n.position + ".weight"),
                                         w(n.tokenType + ".weight"), uint64_t(c.positionOffset));
    x = layernorm(x, n.embNorm);

    std::string approx = c.hiddenAct == "gelu" ? "none" : "tanh";
    for (const LayerWeightNames &l : n.layers) {
      std::string attn = l.query.substr(0, l.query.rfind('.'));
      auto heads = [&](Value v, const std::string &mod) -> Value {
        return b.create<enc::SplitHeadsOp>(loc(mod), bhsn(headDim), v, uint64_t(c.heads));
      };
      Value q = heads(linear(x, l.query, c.hidden), l.query);
      Value k = heads(linear(x, l.key, c.hidden), l.key);
      Value v = heads(linear(x, l.value, c.hidden), l.value);
      Value s = b.create<enc::MatmulOp>(loc(attn), bhsn(ShapedType::kDynamic), q, k,
                                        /*transpose_b=*/true);
      s = b.create<enc::ScaleOp>(loc(attn), s.getType(), s,
                                 b.getF32FloatAttr(float(1.0 / std::sqrt(double(headDim)))));
      s = b.create<enc::MaskOp>(loc(attn), s.getType(), s, lengths);
      s = b.create<enc::SoftmaxOp>(loc(attn), s.getType(), s);
      Value ctxh = b.create<enc::MatmulOp>(loc(attn), bhsn(headDim), s, v, false);
      Value ctxv = b.create<enc::MergeHeadsOp>(loc(attn), bsn(c.hidden), ctxh);
      Value o = linear(ctxv, l.attnOut, c.hidden);
      Value r = b.create<enc::AddOp>(loc(l.attnOut), o.getType(), o, x);
      Value a = layernorm(r, l.attnNorm);
      Value h = linear(a, l.inter, c.intermediate);
      h = b.create<enc::GeluOp>(loc(l.inter), h.getType(), h, approx);
      Value f = linear(h, l.out, c.hidden);
      Value r2 = b.create<enc::AddOp>(loc(l.out), f.getType(), f, a);
      x = layernorm(r2, l.outNorm);
    }

    SmallVector<Value> outs{x};
    if (c.pooling != "none") {
      Value p = b.create<enc::PoolOp>(loc("pooling"), pooledTy, x, lengths, c.pooling);
      if (c.normalize)
        p = b.create<enc::L2NormOp>(loc("normalize"), pooledTy, p);
      outs.push_back(p);
    }
    b.create<func::ReturnOp>(loc("forward"), outs);
    return module;
  }

private:
  OpBuilder b;
  const ModelConfig &c;
  Location fileLoc;
  llvm::StringMap<Value> weights;
};

} // namespace

llvm::Expected<OwningOpRef<ModuleOp>>
encc::buildEncModule(MLIRContext &ctx, const ModelConfig &config, const std::string &sourceName) {
  ctx.loadDialect<func::FuncDialect, enc::EncDialect>();
  if (config.hidden <= 0 || config.heads <= 0 || config.hidden % config.heads != 0)
    return hfError(sourceName + ": hidden size " + llvm::Twine(config.hidden) +
                   " is not a positive multiple of the head count " + llvm::Twine(config.heads));
  if (config.pooling != "none" && config.pooling != "cls" && config.pooling != "mean")
    return hfError(sourceName + ": pooling '" + config.pooling +
                   "' is not supported (supported: none, cls, mean)");
  OwningOpRef<ModuleOp> module = Emitter(ctx, config, sourceName).build();
  std::string diag;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      if (diag.empty())
        diag = d.str();
      return success();
    });
    if (failed(verify(*module)))
      return hfError(sourceName +
                     ": internal error: the emitted enc module does not verify: " + diag);
  }
  return std::move(module);
}
