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
#include "frontends/hf/families/DecoderLayout.h"

#include <cmath>

using namespace encc;

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
    if (auto e = decoder::readConfig(f, c, /*headDimFallback=*/256))
      return e;
    double scalar = 256;
    if (auto e = f.getDouble("query_pre_attn_scalar", scalar, 256, 0, 1e9))
      return e;
    c.attentionScale = 1.0 / std::sqrt(scalar);
    // final_logit_softcapping is the language-model head's, which an encoder does not have.
    if (f.has("attn_logit_softcapping") && !f.isNull("attn_logit_softcapping"))
      return hfError(f.path() + ": attn_logit_softcapping is set; soft-capped attention scores are not supported");
    if (auto e = decoder::refuseRopeScaling(f))
      return e;
    return readLayers(f, c);
  }

  ModelWeightNames weightNames(const ModelConfig &c) const override {
    return decoder::weightNames(c, "pre_feedforward_layernorm");
  }

  std::vector<WeightSpec> expectedWeights(const ModelConfig &c) const override {
    return decoder::expectedWeights(
        c, weightNames(c),
        {{"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"},
         /*onePlusNorms=*/true});
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
      const std::string p = decoder::layerPrefix(l);
      mlir::Value a = e.decoderAttention(e.rmsNorm(x, l.attnNorm), l, p + "self_attn.q_norm",
                                         p + "self_attn.k_norm", c.layerAttention[i]);
      x = e.add(e.rmsNorm(a, p + "post_attention_layernorm"), x, l.attnOut);
      mlir::Value g = e.gatedActivation(e.linear(e.rmsNorm(x, l.outNorm), l.inter, 2 * c.intermediate), l.inter);
      x = e.add(e.rmsNorm(e.linear(g, l.out, c.hidden), p + "post_feedforward_layernorm"), x, l.out);
    }
    return e.rmsNorm(x, "norm");
  }

private:
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
    auto sliding = readSlidingLayers(f, c.layers, [&](int64_t i) { return (i + 1) % pattern != 0; });
    if (!sliding)
      return sliding.takeError();
    c.layerAttention.clear();
    for (bool local : *sliding) {
      ModelConfig::LayerAttention kind;
      kind.causal = !bidirectional;
      kind.ropeTheta = local ? localTheta : globalTheta;
      // transformers: |q - k| < sliding_window // 2 + 1 bidirectional;
      // k > q - sliding_window causal.
      if (local)
        kind.window = bidirectional ? window / 2 : window - 1;
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
