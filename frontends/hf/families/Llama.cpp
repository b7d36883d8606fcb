//===- Llama.cpp - Llama, Mistral and Qwen2 decoders as embedders ---------===//
//
// transformers' LlamaModel, MistralModel and Qwen2Model used as embedders
// (e5-mistral, SFR-Embedding-Mistral and Linq-Embed-Mistral; Qwen2-based
// models that run the causal Qwen2Model): Qwen3's decoder stack without the per-head q/k
// norms. Each layer RMSNorm, then causal attention with grouped key/value
// heads (num_key_value_heads) of head_dim, q and k rotated (rotate_half, the
// whole head, rope_theta), o_proj, the residual; RMSNorm, a SwiGLU
// feed-forward down(act(gate(x)) * up(x)) (gate_proj and up_proj read as one
// Linear), the residual; a final RMSNorm. They differ in:
//  - biases: Llama's q, k, v and o under attention_bias (an MLP bias,
//    mlp_bias, is refused); Mistral none; Qwen2 q, k and v always, o never;
//  - sliding windows: Mistral's sliding_window (when set) on every layer;
//    Qwen2's as Qwen3's (layer_types, or use_sliding_window from
//    max_window_layers); Llama none.
// Pooling comes from the sentence-transformers modules (last token and
// normalisation for these embedders). Scaled rotary positions (rope_scaling,
// Llama 3's "llama3") are refused.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/ModelFamily.h"
#include "frontends/hf/families/DecoderLayout.h"

using namespace encc;

namespace {

class LlamaStyleFamily : public ModelFamily {
public:
  enum class Kind { Llama, Mistral, Qwen2 };
  explicit LlamaStyleFamily(Kind kind) : kind_(kind) {}

  llvm::ArrayRef<llvm::StringRef> modelTypes() const override {
    static const llvm::StringRef llama[] = {"llama"}, mistral[] = {"mistral"}, qwen2[] = {"qwen2"};
    switch (kind_) {
    case Kind::Llama: return llama;
    case Kind::Mistral: return mistral;
    case Kind::Qwen2: return qwen2;
    }
    return {}; // unreachable (-Werror=switch)
  }
  bool gatedFeedForward() const override { return true; }

  llvm::Error readConfig(const ConfigFields &f, ModelConfig &c) const override {
    if (auto e = decoder::readConfig(f, c, /*headDimFallback=*/0))
      return e;
    switch (kind_) {
    case Kind::Llama: {
      bool mlpBias = false;
      if (auto e = f.getBool("mlp_bias", mlpBias, false))
        return e;
      if (mlpBias)
        return hfError(f.path() + ": mlp_bias is true; biases in a Llama MLP are not supported");
      break;
    }
    case Kind::Mistral: c.attentionBias = false; break; // MistralConfig has no attention_bias: none
    case Kind::Qwen2: c.attentionBias = true; break;    // q, k and v always (o never: expectedWeights)
    }
    return decoder::readCausalLayers(f, c, /*slidingAll=*/kind_ == Kind::Mistral);
  }

  ModelWeightNames weightNames(const ModelConfig &c) const override {
    return decoder::weightNames(c, "post_attention_layernorm");
  }

  std::vector<WeightSpec> expectedWeights(const ModelConfig &c) const override {
    decoder::LayerTensors layer{{"input_layernorm", "post_attention_layernorm"}};
    layer.qkNorms = false;
    layer.outBias = kind_ != Kind::Qwen2;
    return decoder::expectedWeights(c, weightNames(c), layer);
  }

  std::vector<std::string> checkpointPrefixes(const ModelConfig &) const override { return {"model.", ""}; }
  SpecialTokenTexts specialTokens() const override {
    if (kind_ == Kind::Qwen2)
      return {"", "", "<|endoftext|>", "<|endoftext|>"};
    return {"<unk>", "<s>", "</s>", ""};
  }
  bool vocabularyOptional() const override { return true; }

  mlir::Value emitEncoder(EncoderEmitter &e) const override {
    return decoder::emitPreNormStack(e, /*qkNorms=*/false);
  }

private:
  Kind kind_;
};

} // namespace

/// Listed in ModelFamily.cpp.
namespace encc {
const ModelFamily &llamaFamily() {
  static const LlamaStyleFamily family(LlamaStyleFamily::Kind::Llama);
  return family;
}
const ModelFamily &mistralFamily() {
  static const LlamaStyleFamily family(LlamaStyleFamily::Kind::Mistral);
  return family;
}
const ModelFamily &qwen2Family() {
  static const LlamaStyleFamily family(LlamaStyleFamily::Kind::Qwen2);
  return family;
}
} // namespace encc
