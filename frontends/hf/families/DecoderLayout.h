//===- DecoderLayout.h - What Llama-style decoder checkpoints share -------===//
//
// Qwen3, Gemma 3, Llama, Mistral and Qwen2 store the same tensors under the
// same names: embed_tokens; per layer layers.i.input_layernorm,
// self_attn.{q,k,v,o}_proj (biases under attention_bias; Qwen2: q, k and v
// only), self_attn.{q,k}_norm over head_dim (Qwen3, Gemma 3), mlp.{gate,up,
// down}_proj and the family's other norms; a final norm. They read
// num_key_value_heads, head_dim, rms_norm_eps and attention_bias alike. The
// families differ in their norms, masks and scales (their own files).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_HF_FAMILIES_DECODERLAYOUT_H
#define ENCC_FRONTENDS_HF_FAMILIES_DECODERLAYOUT_H

#include "frontends/hf/HFImport.h"

#include "mlir/IR/Value.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace encc {

class ConfigFields;
class EncoderEmitter;

namespace decoder {

/// The dims, rms_norm_eps (1e-6), attention_bias (false), num_key_value_heads
/// (num_attention_heads) and head_dim (`headDimFallback`; 0: hidden / heads),
/// even and at most 1024; no token types, no position offset, no MLP or norm
/// biases.
llvm::Error readConfig(const ConfigFields &fields, ModelConfig &config, int64_t headDimFallback);

/// rope_scaling null or absent: scaled rotary positions (yarn, linear,
/// dynamic) are not implemented.
llvm::Error refuseRopeScaling(const ConfigFields &fields);

/// embed_tokens (no position or token-type tables: zeros), per layer the
/// projections, input_layernorm as attnNorm, `ffnNorm` as outNorm, and
/// mlp.gate_up_proj: gate_proj and up_proj read as one Linear.
ModelWeightNames weightNames(const ModelConfig &config, const char *ffnNorm);

/// "layers.i." of layer l.
std::string layerPrefix(const LayerWeightNames &l);

/// What a family's layers hold beside the projections and the gated MLP.
struct LayerTensors {
  std::vector<std::string> norms; ///< under "layers.i."
  bool onePlusNorms = false;      ///< every norm's gamma is 1 + the stored weight (Gemma)
  bool qkNorms = true;            ///< self_attn.q_norm / k_norm over head_dim (Qwen3, Gemma 3)
  bool outBias = true;            ///< o_proj has a bias where q, k and v have one (Qwen2: never)
};

/// Every tensor of weightNames(config, ...): per layer the attention block
/// (q, k and v biases under attention_bias), the tensors `layer` names, the
/// gated MLP; the final "norm".
std::vector<WeightSpec> expectedWeights(const ModelConfig &config, const ModelWeightNames &names,
                                        const LayerTensors &layer);

/// Causal layers with rope_theta (10000 unless set), those listed as
/// sliding_attention (layer_types, else use_sliding_window from
/// max_window_layers on: Qwen2, Qwen3) or every layer where `slidingAll`
/// and sliding_window is set (Mistral) seeing the sliding_window most recent
/// keys, themselves included. rope_scaling refused.
llvm::Error readCausalLayers(const ConfigFields &fields, ModelConfig &config, bool slidingAll);

/// Qwen3's and Llama's stack on weightNames(config, "post_attention_layernorm"):
/// per layer RMSNorm, decoderAttention (with the per-head q/k norms where
/// `qkNorms`), the residual, RMSNorm, the SwiGLU feed-forward, the residual;
/// the final RMSNorm.
mlir::Value emitPreNormStack(EncoderEmitter &e, bool qkNorms);

} // namespace decoder
} // namespace encc

#endif // ENCC_FRONTENDS_HF_FAMILIES_DECODERLAYOUT_H
