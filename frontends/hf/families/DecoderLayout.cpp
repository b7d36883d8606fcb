//===- DecoderLayout.cpp - What Llama-style decoder checkpoints share -----===//
#include "frontends/hf/families/DecoderLayout.h"

#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/ModelFamily.h"

using namespace encc;
using llvm::Twine;

llvm::Error decoder::readConfig(const ConfigFields &f, ModelConfig &c, int64_t headDimFallback) {
  if (auto e = readEncoderDims(f, c))
    return e;
  if (auto e = f.getDouble("rms_norm_eps", c.layerNormEps, 1e-6))
    return e;
  if (auto e = f.getBool("attention_bias", c.attentionBias, false))
    return e;
  c.mlpBias = c.normBias = false;
  if (auto e = f.getInt("num_key_value_heads", c.kvHeads, c.heads > 0 ? c.heads : 1))
    return e;
  if (headDimFallback == 0)
    headDimFallback = c.heads > 0 && c.hidden % c.heads == 0 ? c.hidden / c.heads : 0;
  if (auto e = f.getInt("head_dim", c.headDim, headDimFallback))
    return e;
  if (c.headDim < 2 || c.headDim % 2 != 0 || c.headDim > 1024)
    return hfError(f.path() + ": head_dim " + Twine(c.headDim) + " must be even and in [2, 1024]");
  c.typeVocab = 0; // no token types
  c.positionOffset = 0;
  return llvm::Error::success();
}

llvm::Error decoder::refuseRopeScaling(const ConfigFields &f) {
  if (f.has("rope_scaling") && !f.isNull("rope_scaling"))
    return hfError(f.path() + ": rope_scaling is set; scaled rotary positions (yarn, linear, dynamic) are not "
                              "supported (only rope_scaling null)");
  return llvm::Error::success();
}

ModelWeightNames decoder::weightNames(const ModelConfig &c, const char *ffnNorm) {
  ModelWeightNames n;
  n.word = "embed_tokens";
  n.position = "no_positions"; // zeros: positions are rotary
  n.tokenType = "no_token_types";
  n.tokenTypeSynthetic = true;
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    LayerWeightNames l;
    l.query = p + "self_attn.q_proj";
    l.key = p + "self_attn.k_proj";
    l.value = p + "self_attn.v_proj";
    l.attnOut = p + "self_attn.o_proj";
    l.attnNorm = p + "input_layernorm";
    l.inter = p + "mlp.gate_up_proj"; // gate_proj and up_proj, concatenated
    l.out = p + "mlp.down_proj";
    l.outNorm = p + ffnNorm;
    n.layers.push_back(l);
  }
  return n;
}

std::string decoder::layerPrefix(const LayerWeightNames &l) { return l.attnNorm.substr(0, l.attnNorm.rfind('.') + 1); }

std::vector<WeightSpec> decoder::expectedWeights(const ModelConfig &c, const ModelWeightNames &n,
                                                 const LayerTensors &layer) {
  const int64_t H = c.hidden, I = c.intermediate, D = c.headDimension();
  const int64_t Q = c.heads * D, KV = c.keyValueHeads() * D;
  std::vector<WeightSpec> w;
  auto linear = [&](const std::string &mod, int64_t out, int64_t in, bool bias) {
    w.push_back({mod + ".weight", {out, in}});
    if (bias)
      w.push_back({mod + ".bias", {out}});
  };
  auto norm = [&](const std::string &mod, int64_t size) {
    WeightSpec s{mod + ".weight", {size}};
    s.addOne = layer.onePlusNorms;
    w.push_back(std::move(s));
  };
  w.push_back({n.word + ".weight", {c.vocab, H}});
  w.push_back({n.position + ".weight", {1, H}, false, /*zeros=*/true});
  w.push_back({n.tokenType + ".weight", {1, H}, false, /*zeros=*/true});
  for (const LayerWeightNames &l : n.layers) {
    const std::string p = layerPrefix(l);
    for (const std::string &name : layer.norms)
      norm(p + name, H);
    linear(l.query, Q, H, c.attentionBias);
    linear(l.key, KV, H, c.attentionBias);
    linear(l.value, KV, H, c.attentionBias);
    if (layer.qkNorms) {
      norm(p + "self_attn.q_norm", D);
      norm(p + "self_attn.k_norm", D);
    }
    linear(l.attnOut, H, Q, c.attentionBias && layer.outBias);
    WeightSpec gateUp{l.inter + ".weight", {2 * I, H}};
    gateUp.concatOf = {p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"};
    w.push_back(std::move(gateUp));
    linear(l.out, H, I, false);
  }
  norm("norm", H);
  return w;
}

llvm::Error decoder::readCausalLayers(const ConfigFields &f, ModelConfig &c, bool slidingAll) {
  if (auto e = refuseRopeScaling(f))
    return e;
  double theta = 10000.0;
  if (auto e = readLayerRopeTheta(f, /*layerType=*/nullptr, "rope_theta", 10000.0, theta))
    return e;
  bool useSliding = false;
  int64_t window = 4096, maxWindowLayers = 28;
  if (slidingAll) {
    useSliding = f.has("sliding_window") && !f.isNull("sliding_window");
    maxWindowLayers = 0;
  } else if (auto e = f.getBool("use_sliding_window", useSliding, false)) {
    return e;
  } else if (auto e = f.getInt("max_window_layers", maxWindowLayers, 28, 0)) {
    return e;
  }
  if (f.has("sliding_window") && !f.isNull("sliding_window"))
    if (auto e = f.getInt("sliding_window", window, 4096, 1))
      return e;
  auto sliding = readSlidingLayers(f, c.layers, [&](int64_t i) { return useSliding && i >= maxWindowLayers; });
  if (!sliding)
    return sliding.takeError();
  c.layerAttention.clear();
  for (bool local : *sliding) {
    ModelConfig::LayerAttention kind;
    kind.ropeTheta = theta;
    kind.causal = true;
    if (local)
      kind.window = window - 1; // transformers: key j visible iff j > s - sliding_window
    c.layerAttention.push_back(kind);
  }
  return llvm::Error::success();
}

mlir::Value decoder::emitPreNormStack(EncoderEmitter &e, bool qkNorms) {
  const ModelConfig &c = e.config();
  const ModelWeightNames n = weightNames(c, "post_attention_layernorm");
  mlir::Value x = e.tokenEmbeddings(n);
  for (size_t i = 0; i < n.layers.size(); ++i) {
    const LayerWeightNames &l = n.layers[i];
    const std::string attn = l.query.substr(0, l.query.rfind('.')); // "layers.i.self_attn"
    mlir::Value a = e.decoderAttention(e.rmsNorm(x, l.attnNorm), l, qkNorms ? attn + ".q_norm" : "",
                                       qkNorms ? attn + ".k_norm" : "", c.layerAttention[i]);
    x = e.add(a, x, l.attnOut);
    mlir::Value g = e.gatedActivation(e.linear(e.rmsNorm(x, l.outNorm), l.inter, 2 * c.intermediate), l.inter);
    x = e.add(e.linear(g, l.out, c.hidden), x, l.out);
  }
  return e.rmsNorm(x, "norm");
}
