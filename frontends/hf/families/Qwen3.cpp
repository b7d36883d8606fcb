//===- Qwen3.cpp - Qwen3 (Qwen3-Embedding) -------------------------------===//
//
// transformers' Qwen3Model used as an embedder (Qwen3-Embedding): a pre-norm
// decoder stack without absolute positions or token types and without an
// embedding norm; each layer RMSNorm, then causal attention with grouped
// key/value heads (num_key_value_heads) of head_dim (independent of
// hidden / heads), the q and k projections RMS-normalised per head (q_norm,
// k_norm over head_dim) and rotated (rotate_half, the whole head, rope_theta),
// o_proj, the residual; RMSNorm, a SwiGLU feed-forward down(act(gate(x)) *
// up(x)) (gate_proj and up_proj read as one Linear, enc.glu), the residual;
// a final RMSNorm. Layers listed as sliding_attention (use_sliding_window)
// see the sliding_window most recent keys, themselves included. Linears have
// biases only where attention_bias says (q, k, v, o); the MLP has none.
// Pooling comes from the sentence-transformers modules (last token and
// normalisation for Qwen3-Embedding).
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/ModelFamily.h"

using namespace encc;
using llvm::Twine;

namespace {

constexpr const char *kFull = "full_attention", *kSliding = "sliding_attention";

/// rope_parameters (5.x: {rope_type, rope_theta}) or the legacy rope_theta
/// with rope_scaling null; only the default (unscaled) rotary is supported.
llvm::Error readRopeTheta(const ConfigFields &f, double &theta) {
  if (auto e = f.getDouble("rope_theta", theta, 10000.0, 1, 1e12))
    return e;
  if (!f.isNull("rope_scaling")) {
    llvm::Expected<const nlohmann::json *> scaling = f.getObject("rope_scaling");
    if (!scaling)
      return scaling.takeError();
    if (*scaling)
      return hfError(f.path() + ": rope_scaling is set; scaled rotary positions (yarn, linear, dynamic) are not "
                                "supported (only rope_scaling null)");
  }
  llvm::Expected<const nlohmann::json *> params = f.getObject("rope_parameters");
  if (!params)
    return params.takeError();
  if (!*params)
    return llvm::Error::success();
  const std::string path = f.path() + ": rope_parameters";
  ConfigFields p(**params, path);
  std::string type;
  if (auto e = p.getString("rope_type", type, "default"))
    return e;
  if (type != "default")
    return hfError(path + ": rope_type '" + type + "' is not supported (supported: default)");
  return p.getDouble("rope_theta", theta, theta, 1, 1e12);
}

class Qwen3Family : public ModelFamily {
public:
  llvm::ArrayRef<llvm::StringRef> modelTypes() const override {
    static const llvm::StringRef types[] = {"qwen3"};
    return types;
  }
  bool gatedFeedForward() const override { return true; }

  llvm::Error readConfig(const ConfigFields &f, ModelConfig &c) const override {
    if (auto e = readEncoderDims(f, c))
      return e;
    if (auto e = f.getDouble("rms_norm_eps", c.layerNormEps, 1e-6))
      return e;
    if (auto e = f.getBool("attention_bias", c.attentionBias, false))
      return e;
    c.mlpBias = c.normBias = false;
    if (auto e = f.getInt("num_key_value_heads", c.kvHeads, c.heads > 0 ? c.heads : 1))
      return e;
    if (auto e = f.getInt("head_dim", c.headDim, c.heads > 0 && c.hidden % c.heads == 0 ? c.hidden / c.heads : 0))
      return e;
    if (c.headDim < 2 || c.headDim % 2 != 0 || c.headDim > 1024)
      return hfError(f.path() + ": head_dim " + Twine(c.headDim) + " must be even and in [2, 1024]");
    c.typeVocab = 0; // no token types
    c.positionOffset = 0;
    return readLayers(f, c);
  }

  ModelWeightNames weightNames(const ModelConfig &c) const override {
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
      l.outNorm = p + "post_attention_layernorm";
      n.layers.push_back(l);
    }
    return n;
  }

  std::vector<WeightSpec> expectedWeights(const ModelConfig &c) const override {
    const ModelWeightNames n = weightNames(c);
    const int64_t H = c.hidden, I = c.intermediate, D = c.headDimension();
    const int64_t Q = c.heads * D, KV = c.keyValueHeads() * D;
    std::vector<WeightSpec> w;
    auto linear = [&](const std::string &mod, int64_t out, int64_t in, bool bias) {
      w.push_back({mod + ".weight", {out, in}});
      if (bias)
        w.push_back({mod + ".bias", {out}});
    };
    w.push_back({n.word + ".weight", {c.vocab, H}});
    w.push_back({n.position + ".weight", {1, H}, false, /*zeros=*/true});
    w.push_back({n.tokenType + ".weight", {1, H}, false, /*zeros=*/true});
    for (const LayerWeightNames &l : n.layers) {
      const std::string attn = attention(l);
      w.push_back({l.attnNorm + ".weight", {H}});
      linear(l.query, Q, H, c.attentionBias);
      linear(l.key, KV, H, c.attentionBias);
      linear(l.value, KV, H, c.attentionBias);
      w.push_back({attn + ".q_norm.weight", {D}});
      w.push_back({attn + ".k_norm.weight", {D}});
      linear(l.attnOut, H, Q, c.attentionBias);
      w.push_back({l.outNorm + ".weight", {H}});
      const std::string mlp = l.inter.substr(0, l.inter.rfind('.'));
      WeightSpec gateUp{l.inter + ".weight", {2 * I, H}};
      gateUp.concatOf = {mlp + ".gate_proj.weight", mlp + ".up_proj.weight"};
      w.push_back(std::move(gateUp));
      linear(l.out, H, I, false);
    }
    w.push_back({"norm.weight", {H}});
    return w;
  }

  std::vector<std::string> checkpointPrefixes(const ModelConfig &) const override { return {"model.", ""}; }
  SpecialTokenTexts specialTokens() const override { return {"", "", "<|endoftext|>", "<|endoftext|>"}; }
  bool vocabularyOptional() const override { return true; }

  mlir::Value emitEncoder(EncoderEmitter &e) const override {
    const ModelConfig &c = e.config();
    const ModelWeightNames n = weightNames(c);
    mlir::Value x = e.tokenEmbeddings(n);
    for (size_t i = 0; i < n.layers.size(); ++i) {
      const LayerWeightNames &l = n.layers[i];
      const std::string attn = attention(l);
      mlir::Value a =
          e.decoderAttention(e.rmsNorm(x, l.attnNorm), l, attn + ".q_norm", attn + ".k_norm", c.layerAttention[i]);
      x = e.add(a, x, l.attnOut);
      mlir::Value g = e.gatedActivation(e.linear(e.rmsNorm(x, l.outNorm), l.inter, 2 * c.intermediate), l.inter);
      x = e.add(e.linear(g, l.out, c.hidden), x, l.out);
    }
    return e.rmsNorm(x, "norm");
  }

private:
  /// "layers.i.self_attn"
  static std::string attention(const LayerWeightNames &l) { return l.query.substr(0, l.query.rfind('.')); }

  /// Every layer causal with rope_theta; sliding_attention layers (layer_types,
  /// else use_sliding_window from max_window_layers on) see the
  /// sliding_window most recent keys.
  static llvm::Error readLayers(const ConfigFields &f, ModelConfig &c) {
    double theta = 10000.0;
    if (auto e = readRopeTheta(f, theta))
      return e;
    bool useSliding = false;
    if (auto e = f.getBool("use_sliding_window", useSliding, false))
      return e;
    int64_t window = 4096, maxWindowLayers = 28;
    if (auto e = f.getInt("sliding_window", window, 4096))
      return e;
    if (auto e = f.getInt("max_window_layers", maxWindowLayers, 28, 0))
      return e;
    std::vector<std::string> types;
    bool listed = false;
    if (auto e = f.getStringList("layer_types", types, listed))
      return e;
    if (listed && static_cast<int64_t>(types.size()) != c.layers)
      return hfError(f.path() + ": layer_types lists " + Twine(types.size()) + " layers, num_hidden_layers is " +
                     Twine(c.layers));
    c.layerAttention.clear();
    if (c.layers > 1024)
      return llvm::Error::success(); // parseModelConfig refuses it before anything is built per layer
    for (int64_t i = 0; i < c.layers; ++i) {
      const std::string type = listed ? types[i] : (useSliding && i >= maxWindowLayers ? kSliding : kFull);
      ModelConfig::LayerAttention kind;
      kind.ropeTheta = theta;
      kind.causal = true;
      if (type == kSliding)
        kind.window = window - 1; // transformers: key j visible iff j > s - sliding_window
      else if (type != kFull)
        return hfError(f.path() + ": layer_types[" + Twine(i) + "] '" + type + "' is not supported (supported: " +
                       kFull + ", " + kSliding + ")");
      c.layerAttention.push_back(kind);
    }
    return llvm::Error::success();
  }
};

} // namespace

/// Listed in ModelFamily.cpp.
namespace encc {
const ModelFamily &qwen3Family() {
  static const Qwen3Family family;
  return family;
}
} // namespace encc
