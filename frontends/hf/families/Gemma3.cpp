//===- Gemma3.cpp - Gemma 3 text models (EmbeddingGemma) ------------------===//
//
// transformers' Gemma3TextModel: the word embeddings scaled by
// sqrt(hidden_size); per layer an RMSNorm, attention (q/k/v projections,
// per-head q/k RMSNorms over head_dim, rotary with the layer type's theta,
// grouped key/value heads, scores scaled by query_pre_attn_scalar^-0.5,
// biases under attention_bias), an RMSNorm of its output before the
// residual, then RMSNorm, a gated feed-forward down(act(gate(x)) * up(x))
// (GeGLU with hidden_activation; gate_proj and up_proj read as one Linear)
// and an RMSNorm of its output before the residual; a final RMSNorm. Every
// RMSNorm scales by 1 + weight (WeightSpec::addOne). layer_types picks full
// or sliding layers: EmbeddingGemma's use_bidirectional_attention sees every
// valid key on full layers and the keys within sliding_window // 2 either
// side on sliding ones (transformers stores sliding_window // 2 + 1 as an
// exclusive bound); a causal Gemma 3 sees the keys up to the query, the
// sliding_window most recent on sliding layers. Rotary thetas from
// rope_parameters (5.x) or rope_theta / rope_local_base_freq; scaled rotary
// and attention logit soft-capping are refused.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/ModelFamily.h"

#include <cmath>

using namespace encc;
using llvm::Twine;

namespace {

constexpr const char *kFull = "full_attention", *kSliding = "sliding_attention";

class Gemma3Family : public ModelFamily {
public:
  llvm::ArrayRef<llvm::StringRef> modelTypes() const override {
    static const llvm::StringRef types[] = {"gemma3_text"};
    return types;
  }
  const char *activationKey() const override { return "hidden_activation"; }
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
    if (auto e = f.getInt("head_dim", c.headDim, 256))
      return e;
    if (c.headDim < 2 || c.headDim % 2 != 0 || c.headDim > 1024)
      return hfError(f.path() + ": head_dim " + Twine(c.headDim) + " must be even and in [2, 1024]");
    double scalar = 256;
    if (auto e = f.getDouble("query_pre_attn_scalar", scalar, 256, 0, 1e9))
      return e;
    c.attentionScale = 1.0 / std::sqrt(scalar);
    // final_logit_softcapping is the language-model head's, which an encoder does not have.
    if (f.has("attn_logit_softcapping") && !f.isNull("attn_logit_softcapping"))
      return hfError(f.path() + ": attn_logit_softcapping is set; soft-capped attention scores are not supported");
    if (f.has("rope_scaling") && !f.isNull("rope_scaling"))
      return hfError(f.path() + ": rope_scaling is set; scaled rotary positions are not supported (only null)");
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
      l.outNorm = p + "pre_feedforward_layernorm";
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
    auto norm = [&](const std::string &mod, int64_t size) {
      WeightSpec s{mod + ".weight", {size}};
      s.addOne = true;
      w.push_back(std::move(s));
    };
    w.push_back({n.word + ".weight", {c.vocab, H}});
    w.push_back({n.position + ".weight", {1, H}, false, /*zeros=*/true});
    w.push_back({n.tokenType + ".weight", {1, H}, false, /*zeros=*/true});
    for (const LayerWeightNames &l : n.layers) {
      const std::string p = layerPrefix(l);
      norm(l.attnNorm, H);
      linear(l.query, Q, H, c.attentionBias);
      linear(l.key, KV, H, c.attentionBias);
      linear(l.value, KV, H, c.attentionBias);
      norm(p + "self_attn.q_norm", D);
      norm(p + "self_attn.k_norm", D);
      linear(l.attnOut, H, Q, c.attentionBias);
      norm(p + "post_attention_layernorm", H);
      norm(l.outNorm, H);
      WeightSpec gateUp{l.inter + ".weight", {2 * I, H}};
      gateUp.concatOf = {p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"};
      w.push_back(std::move(gateUp));
      linear(l.out, H, I, false);
      norm(p + "post_feedforward_layernorm", H);
    }
    norm("norm", H);
    return w;
  }

  std::vector<std::string> checkpointPrefixes(const ModelConfig &) const override { return {"model.", ""}; }
  SpecialTokenTexts specialTokens() const override { return {"<unk>", "<bos>", "<eos>", "<pad>"}; }
  bool vocabularyOptional() const override { return true; }

  mlir::Value emitEncoder(EncoderEmitter &e) const override {
    const ModelConfig &c = e.config();
    const ModelWeightNames n = weightNames(c);
    // Gemma3TextScaledWordEmbedding: the rows times sqrt(hidden_size) in f32.
    mlir::Value x = e.scale(e.tokenEmbeddings(n), float(std::sqrt(double(c.hidden))), "embed_tokens");
    for (size_t i = 0; i < n.layers.size(); ++i) {
      const LayerWeightNames &l = n.layers[i];
      const std::string p = layerPrefix(l);
      mlir::Value a = e.decoderAttention(e.rmsNorm(x, l.attnNorm), l, p + "self_attn.q_norm",
                                         p + "self_attn.k_norm", c.layerAttention[i]);
      x = e.add(e.rmsNorm(a, p + "post_attention_layernorm"), x, l.attnOut);
      mlir::Value g = e.gatedActivation(e.linear(e.rmsNorm(x, l.outNorm), l.inter, 2 * c.intermediate), l.inter);
      x = e.add(e.rmsNorm(e.linear(g, l.out, c.hidden), p + "post_feedforward_layernorm"), x, l.out);
    }
    return e.rmsNorm(x, "norm");
  }

private:
  /// "layers.i."
  static std::string layerPrefix(const LayerWeightNames &l) { return l.attnNorm.substr(0, l.attnNorm.rfind('.') + 1); }

  /// Each layer full or sliding (layer_types, else every
  /// sliding_window_pattern-th full), bidirectional or causal, with its theta.
  static llvm::Error readLayers(const ConfigFields &f, ModelConfig &c) {
    bool bidirectional = false;
    if (auto e = f.getBool("use_bidirectional_attention", bidirectional, false))
      return e;
    int64_t window = 4096, pattern = 6;
    if (auto e = f.getInt("sliding_window", window, 4096))
      return e;
    if (auto e = f.getInt("sliding_window_pattern", pattern, 6))
      return e;
    double globalTheta = 1e6, localTheta = 1e4;
    if (auto e = readLayerRopeTheta(f, kFull, "rope_theta", 1e6, globalTheta))
      return e;
    if (auto e = readLayerRopeTheta(f, kSliding, "rope_local_base_freq", 1e4, localTheta))
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
      const std::string type = listed ? types[i] : ((i + 1) % pattern ? kSliding : kFull);
      ModelConfig::LayerAttention kind;
      kind.causal = !bidirectional;
      if (type == kFull) {
        kind.ropeTheta = globalTheta;
      } else if (type == kSliding) {
        kind.ropeTheta = localTheta;
        // transformers: |q - k| < sliding_window // 2 + 1 bidirectional;
        // k > q - sliding_window causal.
        kind.window = bidirectional ? window / 2 : window - 1;
      } else {
        return hfError(f.path() + ": layer_types[" + Twine(i) + "] '" + type + "' is not supported (supported: " +
                       kFull + ", " + kSliding + ")");
      }
      c.layerAttention.push_back(kind);
    }
    return llvm::Error::success();
  }
};

} // namespace

/// Listed in ModelFamily.cpp.
namespace encc {
const ModelFamily &gemma3Family() {
  static const Gemma3Family family;
  return family;
}
} // namespace encc
