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
#include "frontends/hf/ModelFamily.h"
#include "frontends/hf/families/DecoderLayout.h"

using namespace encc;

namespace {

class Qwen3Family : public ModelFamily {
public:
  llvm::ArrayRef<llvm::StringRef> modelTypes() const override {
    static const llvm::StringRef types[] = {"qwen3"};
    return types;
  }
  bool gatedFeedForward() const override { return true; }

  llvm::Error readConfig(const ConfigFields &f, ModelConfig &c) const override {
    if (auto e = decoder::readConfig(f, c, /*headDimFallback=*/0))
      return e;
    return decoder::readCausalLayers(f, c, /*slidingAll=*/false);
  }

  ModelWeightNames weightNames(const ModelConfig &c) const override {
    return decoder::weightNames(c, "post_attention_layernorm");
  }

  std::vector<WeightSpec> expectedWeights(const ModelConfig &c) const override {
    return decoder::expectedWeights(c, weightNames(c), {{"input_layernorm", "post_attention_layernorm"}});
  }

  std::vector<std::string> checkpointPrefixes(const ModelConfig &) const override { return {"model.", ""}; }
  SpecialTokenTexts specialTokens() const override { return {"", "", "<|endoftext|>", "<|endoftext|>"}; }
  bool vocabularyOptional() const override { return true; }

  mlir::Value emitEncoder(EncoderEmitter &e) const override {
    return decoder::emitPreNormStack(e, /*qkNorms=*/true);
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
