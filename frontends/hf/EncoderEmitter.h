//===- EncoderEmitter.h - Shared pieces of the encoder graphs -------------===//
//
// The enc ops a family's graph is made of, one method per piece a reader of
// the BERT paper would name: Linear, LayerNorm, GELU, the embeddings, self-
// attention, a post-LayerNorm layer. Ops are located by the name of the HF
// module they come from, e.g. loc("encoder.layer.0.attention.self.query").
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_HF_ENCODEREMITTER_H
#define ENCC_FRONTENDS_HF_ENCODEREMITTER_H

#include "frontends/hf/HFImport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace encc {

class EncoderEmitter {
public:
  /// Emits at `b`'s insertion point, inside @forward(ids, lengths[, type_ids]);
  /// `typeIds` is null when the model has one token type.
  EncoderEmitter(mlir::OpBuilder &b, const ModelConfig &config, mlir::Location fileLoc, mlir::Value ids,
                 mlir::Value lengths, mlir::Value typeIds)
      : b(b), c(config), fileLoc(fileLoc), ids(ids), lengths(lengths), typeIds(typeIds) {}

  const ModelConfig &config() const { return c; }

  /// NameLoc(hfModule) inside the model folder's location.
  mlir::Location loc(const std::string &hfModule);
  /// tensor<?x?xNxf32>
  mlir::RankedTensorType bsn(int64_t n);
  /// tensor<?xheadsx?xNxf32>
  mlir::RankedTensorType bhsn(int64_t n);

  /// One enc.weight per spec, in order, at the insertion point.
  void declareWeights(const std::vector<WeightSpec> &specs);
  /// The enc.weight declared as `name`, or null.
  mlir::Value weight(const std::string &name) const { return weights.lookup(name); }

  /// x·Wᵀ + b with `mod`.weight / `mod`.bias: x's shape with the last dim n.
  mlir::Value linear(mlir::Value x, const std::string &mod, int64_t n);
  /// LayerNorm with `mod`.weight / `mod`.bias and the config's epsilon.
  mlir::Value layernorm(mlir::Value x, const std::string &mod);
  /// RMSNorm with `mod`.weight and the config's epsilon, over each group of
  /// the weight's size (the last dim, or a head: Qwen3's q/k norms).
  mlir::Value rmsNorm(mlir::Value x, const std::string &mod);
  /// The config's activation (erf or tanh GELU).
  mlir::Value gelu(mlir::Value x, const std::string &mod) { return activation(x, c.hiddenAct, mod); }
  /// `act` (erf or tanh GELU; readActivation admits SiLU for gated
  /// feed-forwards only) of x.
  mlir::Value activation(mlir::Value x, Activation act, const std::string &mod);
  mlir::Value tanh(mlir::Value x, const std::string &mod);
  /// x * factor (as an f32 constant).
  mlir::Value scale(mlir::Value x, double factor, const std::string &mod);
  mlir::Value add(mlir::Value x, mlir::Value y, const std::string &mod);
  /// `parts` equal slices of x's last dim.
  llvm::SmallVector<mlir::Value> split(mlir::Value x, int64_t parts, const std::string &mod);
  /// Rotary positions on each of the `heads` heads of x [B, S, heads * D]
  /// (rotate_half, the whole head of the config's head dim), f32 angles with
  /// `theta`.
  mlir::Value rotary(mlir::Value x, int64_t heads, double theta, const std::string &mod);
  /// The gated unit of x [..., 2I]: act(x[..., :I]) * x[..., I:] with the
  /// config's activation (GeGLU, SwiGLU).
  mlir::Value gatedActivation(mlir::Value x, const std::string &mod);
  /// enc.attention on merged-head q [B, S, heads * D], k and v [B, S,
  /// kvHeads * D] (the config's heads, key/value heads and head dim) with the
  /// key-padding mask and 1/sqrt(D), limited as `kind` says (a window,
  /// causal).
  mlir::Value attention(mlir::Value q, mlir::Value k, mlir::Value v, const ModelConfig::LayerAttention &kind,
                        const std::string &mod);
  /// A decoder-style attention block on the normed hidden state h (Qwen3,
  /// Gemma 3, Llama): the q, k and v projections (l.query / l.key / l.value),
  /// the per-head RMSNorms `qNorm` and `kNorm` of q and k ("": none, as in
  /// Llama, Mistral and Qwen2), rotary positions with
  /// the layer's theta, enc.attention as `kind` says, and the output
  /// projection l.attnOut: [B, S, hidden].
  mlir::Value decoderAttention(mlir::Value h, const LayerWeightNames &l, const std::string &qNorm,
                               const std::string &kNorm, const ModelConfig::LayerAttention &kind);
  /// hidden [B, S, H] pooled to [B, H].
  mlir::Value pool(mlir::Value hidden, Pooling pooling, const std::string &mod);

  /// word[ids] + position[s + offset] + type[type_ids] (type[0] without type
  /// ids), then the embedding LayerNorm.
  mlir::Value embeddings(const ModelWeightNames &n) { return layernorm(tokenEmbeddings(n), n.embNorm); }
  /// The sum before the embedding LayerNorm (decoder-style models have none).
  mlir::Value tokenEmbeddings(const ModelWeightNames &n);
  /// Every later selfAttention adds a bucketed relative position bias (the
  /// [buckets, heads] `table`, shared by the layers; MPNet) to the scaled
  /// scores before the mask.
  void setRelativePositionBias(mlir::Value table, int64_t maxDistance) {
    positionBias = table;
    positionMaxDistance = maxDistance;
  }

  /// The Q, K and V projections and enc.attention on them (the padding mask,
  /// 1/sqrt(head dim), and what `kind` adds: ALiBi): the context before the
  /// output projection.
  mlir::Value selfAttention(mlir::Value x, const LayerWeightNames &l, const ModelConfig::LayerAttention &kind = {});
  /// BERT's layer: LN(x + out(attention(x))), then LN(a + FFN(a)).
  mlir::Value postLayerNormLayer(mlir::Value x, const LayerWeightNames &l);

private:
  mlir::OpBuilder &b;
  const ModelConfig &c;
  mlir::Location fileLoc;
  mlir::Value ids, lengths, typeIds;
  llvm::StringMap<mlir::Value> weights;
  mlir::Value positionBias;
  int64_t positionMaxDistance = 0;
};

} // namespace encc

#endif // ENCC_FRONTENDS_HF_ENCODEREMITTER_H
