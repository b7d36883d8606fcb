//===- EncoderEmitter.cpp - Shared pieces of the encoder graphs -----------===//
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/EmitPooling.h"
#include "ir/EncOps.h"

#include <cmath>

using namespace encc;
using namespace mlir;

Location EncoderEmitter::loc(const std::string &hfModule) {
  return NameLoc::get(b.getStringAttr(hfModule), fileLoc);
}

RankedTensorType EncoderEmitter::bsn(int64_t n) {
  return RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, n}, b.getF32Type());
}

RankedTensorType EncoderEmitter::bhsn(int64_t n) {
  return RankedTensorType::get({ShapedType::kDynamic, c.heads, ShapedType::kDynamic, n}, b.getF32Type());
}

void EncoderEmitter::declareWeights(const std::vector<WeightSpec> &specs) {
  for (const WeightSpec &s : specs) {
    auto ty = RankedTensorType::get(s.shape, b.getF32Type());
    std::string mod = s.name.substr(0, s.name.rfind('.'));
    weights[s.name] = b.create<enc::WeightOp>(loc(mod), ty, s.name);
  }
}

Value EncoderEmitter::linear(Value x, const std::string &mod, int64_t n) {
  auto xt = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(xt.getShape());
  shape.back() = n;
  return b.create<enc::LinearOp>(loc(mod), RankedTensorType::get(shape, b.getF32Type()), x, weight(mod + ".weight"),
                                 weight(mod + ".bias"),
                                 enc::Epilogue::none);
}

Value EncoderEmitter::layernorm(Value x, const std::string &mod) {
  return b.create<enc::LayerNormOp>(loc(mod), x.getType(), x, weight(mod + ".weight"), weight(mod + ".bias"),
                                    b.getF32FloatAttr(float(c.layerNormEps)));
}

Value EncoderEmitter::rmsNorm(Value x, const std::string &mod) {
  return b.create<enc::RmsNormOp>(loc(mod), x.getType(), x, weight(mod + ".weight"),
                                  b.getF32FloatAttr(float(c.layerNormEps)));
}

Value EncoderEmitter::activation(Value x, Activation act, const std::string &mod) {
  enc::GeluApproximation approx = enc::GeluApproximation::none;
  switch (act) {
  case Activation::Gelu: approx = enc::GeluApproximation::none; break;
  case Activation::GeluTanh: approx = enc::GeluApproximation::tanh; break;
  case Activation::Silu: llvm_unreachable("readActivation admits SiLU for gated feed-forwards only");
  }
  return b.create<enc::GeluOp>(loc(mod), x.getType(), x, approx);
}

Value EncoderEmitter::tanh(Value x, const std::string &mod) {
  return b.create<enc::TanhOp>(loc(mod), x.getType(), x);
}

Value EncoderEmitter::scale(Value x, double factor, const std::string &mod) {
  return b.create<enc::ScaleOp>(loc(mod), x.getType(), x, b.getF32FloatAttr(float(factor)));
}

Value EncoderEmitter::decoderAttention(Value h, const LayerWeightNames &l, const std::string &qNorm,
                                       const std::string &kNorm, const ModelConfig::LayerAttention &kind) {
  const int64_t D = c.headDimension(), kvHeads = c.keyValueHeads();
  const std::string attn = l.query.substr(0, l.query.rfind('.')), rope = attn + ".rotary_emb";
  auto normed = [&](Value x, const std::string &norm) { return norm.empty() ? x : rmsNorm(x, norm); };
  Value q = rotary(normed(linear(h, l.query, c.heads * D), qNorm), c.heads, kind.ropeTheta, rope);
  Value k = rotary(normed(linear(h, l.key, kvHeads * D), kNorm), kvHeads, kind.ropeTheta, rope);
  Value v = linear(h, l.value, kvHeads * D);
  return linear(attention(q, k, v, kind, attn), l.attnOut, c.hidden);
}

Value EncoderEmitter::add(Value x, Value y, const std::string &mod) {
  return b.create<enc::AddOp>(loc(mod), x.getType(), x, y);
}

SmallVector<Value> EncoderEmitter::split(Value x, int64_t parts, const std::string &mod) {
  auto xt = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(xt.getShape());
  shape.back() /= parts;
  SmallVector<Type> types(parts, RankedTensorType::get(shape, b.getF32Type()));
  auto op = b.create<enc::SplitOp>(loc(mod), types, x, b.getI64IntegerAttr(parts));
  return SmallVector<Value>(op.getOutputs());
}

Value EncoderEmitter::rotary(Value x, int64_t heads, double theta, const std::string &mod) {
  const int64_t headDim = c.headDimension();
  return b.create<enc::RotaryOp>(loc(mod), x.getType(), x, b.getI64IntegerAttr(heads),
                                 b.getI64IntegerAttr(headDim), b.getF32FloatAttr(float(theta)),
                                 enc::RotaryLayoutAttr::get(b.getContext(), enc::RotaryLayout::half));
}

Value EncoderEmitter::gatedActivation(Value x, const std::string &mod) {
  enc::GluKind kind = enc::GluKind::geglu;
  switch (c.hiddenAct) {
  case Activation::Gelu: kind = enc::GluKind::geglu; break;
  case Activation::GeluTanh: kind = enc::GluKind::geglu_tanh; break;
  case Activation::Silu: kind = enc::GluKind::swiglu; break;
  }
  auto xt = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(xt.getShape());
  shape.back() /= 2;
  return b.create<enc::GluOp>(loc(mod), RankedTensorType::get(shape, b.getF32Type()), x,
                              enc::GluKindAttr::get(b.getContext(), kind));
}

Value EncoderEmitter::attention(Value q, Value k, Value v, const ModelConfig::LayerAttention &kind,
                                const std::string &mod) {
  const int64_t headDim = c.headDimension(), kvHeads = c.keyValueHeads();
  return b.create<enc::AttentionOp>(
      loc(mod), q.getType(), ValueRange{q, k, v}, lengths, positionBias, b.getI64IntegerAttr(c.heads),
      b.getF32FloatAttr(float(c.attentionScale > 0 ? c.attentionScale : 1.0 / std::sqrt(double(headDim)))),
      enc::PaddingAttr::get(b.getContext(), enc::Padding::right), /*bf16_pv=*/nullptr, /*bf16_amx=*/nullptr,
      positionBias ? b.getI64IntegerAttr(positionMaxDistance) : nullptr,
      kind.window >= 0 ? b.getI64IntegerAttr(kind.window) : nullptr, kind.causal ? b.getUnitAttr() : nullptr,
      kvHeads != c.heads ? b.getI64IntegerAttr(kvHeads) : nullptr, kind.alibi ? b.getUnitAttr() : nullptr);
}

Value EncoderEmitter::pool(Value hidden, Pooling pooling, const std::string &mod) {
  std::optional<enc::PoolingMode> mode = poolOpMode(pooling);
  assert(mode && "pool() takes a pooling that has an output");
  auto pooledTy = RankedTensorType::get({ShapedType::kDynamic, c.hidden}, b.getF32Type());
  return b.create<enc::PoolOp>(loc(mod), pooledTy, hidden, lengths, *mode);
}

Value EncoderEmitter::tokenEmbeddings(const ModelWeightNames &n) {
  return b.create<enc::EmbeddingOp>(loc("embeddings"), bsn(c.hidden), ids, weight(n.word + ".weight"),
                                    weight(n.position + ".weight"), weight(n.tokenType + ".weight"),
                                    uint64_t(c.positionOffset), typeIds, c.positionPadId);
}

Value EncoderEmitter::selfAttention(Value x, const LayerWeightNames &l, const ModelConfig::LayerAttention &kind) {
  Value q = linear(x, l.query, c.hidden), k = linear(x, l.key, c.hidden), v = linear(x, l.value, c.hidden);
  return attention(q, k, v, kind, l.query.substr(0, l.query.rfind('.')));
}

Value EncoderEmitter::postLayerNormLayer(Value x, const LayerWeightNames &l) {
  Value o = linear(selfAttention(x, l), l.attnOut, c.hidden);
  Value a = layernorm(b.create<enc::AddOp>(loc(l.attnOut), o.getType(), o, x), l.attnNorm);
  Value h = gelu(linear(a, l.inter, c.intermediate), l.inter);
  Value f = linear(h, l.out, c.hidden);
  return layernorm(b.create<enc::AddOp>(loc(l.out), f.getType(), f, a), l.outNorm);
}
