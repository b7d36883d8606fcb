//===- DecoderLayout.h - What Llama-style decoder checkpoints share -------===//
//
// Qwen3 and Gemma 3 store the same tensors under the same names:
// embed_tokens; per layer layers.i.input_layernorm, self_attn.{q,k,v,o}_proj
// (biases under attention_bias), self_attn.{q,k}_norm over head_dim,
// mlp.{gate,up,down}_proj and the family's other norms; a final norm. They
// read num_key_value_heads, head_dim, rms_norm_eps and attention_bias alike.
// The families differ in their norms, masks and scales (their own files).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_HF_FAMILIES_DECODERLAYOUT_H
#define ENCC_FRONTENDS_HF_FAMILIES_DECODERLAYOUT_H

#include "frontends/hf/HFImport.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace encc {

class ConfigFields;

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

/// Every tensor of weightNames(config, ...): per layer the attention block,
/// q_norm / k_norm, the gated MLP and the norms `layerNorms` (names under
/// "layers.i."); the final "norm". `onePlusNorms`: every norm's gamma is
/// 1 + the stored weight (Gemma).
std::vector<WeightSpec> expectedWeights(const ModelConfig &config, const ModelWeightNames &names,
                                        const std::vector<std::string> &layerNorms, bool onePlusNorms);

} // namespace decoder
} // namespace encc

#endif // ENCC_FRONTENDS_HF_FAMILIES_DECODERLAYOUT_H
