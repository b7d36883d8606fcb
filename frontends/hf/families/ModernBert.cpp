//===- ModernBert.cpp - ModernBERT (gte-modernbert, modernbert-embed) ----===//
//
// tests/reference/modernbert/spec.md is the reference: a pre-norm encoder
// without absolute positions or token types; each layer's attention is global
// (every valid key, rotary theta global_rope_theta) or local (keys within
// local_attention // 2, rotary theta local_rope_theta), layer_types /
// rope_parameters overriding the legacy keys; one Wqkv projection ([3][heads]
// [head dim] rows), a GeGLU feed-forward (Wi's first half activated), norms
// and Linears without biases unless norm_bias / attention_bias / mlp_bias, no
// attention norm in layer 0, a final norm. Emitted directly in the semantic
// ops: enc.rotary, enc.attention {window}, enc.glu. The sequence-
// classification head pools (cls / mean), then dense, activation, norm and
// the classifier. Byte-level BPE tokenizer.json with [CLS] $A [SEP].
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/ModelFamily.h"

using namespace encc;
using llvm::Twine;

namespace {

constexpr const char *kGlobal = "full_attention", *kLocal = "sliding_attention";

class ModernBertFamily : public ModelFamily {
public:
  llvm::ArrayRef<llvm::StringRef> modelTypes() const override {
    static const llvm::StringRef types[] = {"modernbert"};
    return types;
  }
  const char *activationKey() const override { return "hidden_activation"; }
  bool gatedFeedForward() const override { return true; }

  llvm::Error readConfig(const ConfigFields &f, ModelConfig &c) const override {
    if (auto e = readEncoderDims(f, c))
      return e;
    // transformers reads norm_eps only (layer_norm_eps in some configs is ignored).
    if (auto e = f.getDouble("norm_eps", c.layerNormEps, 1e-5))
      return e;
    if (auto e = f.getBool("norm_bias", c.normBias, false))
      return e;
    if (auto e = f.getBool("attention_bias", c.attentionBias, false))
      return e;
    if (auto e = f.getBool("mlp_bias", c.mlpBias, false))
      return e;
    if (auto e = f.getBool("classifier_bias", c.classifierBias, false))
      return e;
    if (auto e = readActivation(f, "classifier_activation", c.classifierAct))
      return e;
    std::string pooling;
    if (auto e = f.getString("classifier_pooling", pooling, "cls"))
      return e;
    if (pooling == "cls")
      c.classifierPooling = Pooling::Cls;
    else if (pooling == "mean")
      c.classifierPooling = Pooling::Mean;
    else
      return hfError(f.path() + ": classifier_pooling '" + pooling + "' is not supported (supported: cls, mean)");
    if (c.heads > 0 && c.hidden % c.heads == 0) {
      int64_t headDim = c.hidden / c.heads;
      if (auto e = f.getInt("head_dim", headDim, headDim))
        return e;
      if (headDim != c.hidden / c.heads)
        return hfError(f.path() + ": head_dim " + Twine(headDim) + " differs from hidden_size / num_attention_heads " +
                       Twine(c.hidden / c.heads) + " (ModernBERT's attention uses the latter)");
    }
    return readLayers(f, c);
  }

  ModelWeightNames weightNames(const ModelConfig &c) const override {
    ModelWeightNames n;
    n.word = "embeddings.tok_embeddings";
    n.position = "embeddings.no_positions"; // zeros: positions are rotary
    n.tokenType = "embeddings.no_token_types";
    n.tokenTypeSynthetic = true;
    n.embNorm = "embeddings.norm";
    for (int64_t i = 0; i < c.layers; ++i) {
      std::string p = "layers." + std::to_string(i) + ".";
      LayerWeightNames l;
      l.query = p + "attn.Wqkv"; // q, k and v in one projection
      l.attnOut = p + "attn.Wo";
      l.attnNorm = i == 0 ? "" : p + "attn_norm"; // layer 0 has none
      l.inter = p + "mlp.Wi";
      l.out = p + "mlp.Wo";
      l.outNorm = p + "mlp_norm";
      n.layers.push_back(l);
    }
    return n;
  }

  std::vector<WeightSpec> expectedWeights(const ModelConfig &c) const override {
    ModelWeightNames n = weightNames(c);
    const int64_t H = c.hidden, I = c.intermediate;
    std::vector<WeightSpec> w;
    auto linear = [&](const std::string &mod, int64_t out, int64_t in, bool bias) {
      w.push_back({mod + ".weight", {out, in}});
      if (bias)
        w.push_back({mod + ".bias", {out}});
    };
    w.push_back({n.word + ".weight", {c.vocab, H}});
    w.push_back({n.position + ".weight", {1, H}, false, /*zeros=*/true});
    w.push_back({n.tokenType + ".weight", {1, H}, false, /*zeros=*/true});
    appendNorm(w, c, n.embNorm, false);
    for (const LayerWeightNames &l : n.layers) {
      if (!l.attnNorm.empty())
        appendNorm(w, c, l.attnNorm, false);
      linear(l.query, 3 * H, H, c.attentionBias);
      linear(l.attnOut, H, H, c.attentionBias);
      appendNorm(w, c, l.outNorm, false);
      linear(l.inter, 2 * I, H, c.mlpBias);
      linear(l.out, H, I, c.mlpBias);
    }
    appendNorm(w, c, "final_norm", false);
    return w;
  }

  std::vector<std::string> checkpointPrefixes(const ModelConfig &) const override { return {"model.", ""}; }
  SpecialTokenTexts specialTokens() const override { return {"[UNK]", "[CLS]", "[SEP]", "[PAD]"}; }
  bool vocabularyOptional() const override { return true; }

  llvm::Expected<ClassifierWeightNames> classifierNames(const ModelConfig &) const override {
    // ModernBertForSequenceClassification: head.dense, head.norm and
    // classifier, all outside "model.".
    return ClassifierWeightNames{"head.dense", "classifier", /*denseUnprefixed=*/true, /*outUnprefixed=*/true};
  }
  std::vector<WeightSpec> classifierWeights(const ModelConfig &c, const ClassifierWeightNames &head) const override {
    std::vector<WeightSpec> w{{head.dense + ".weight", {c.hidden, c.hidden}, true}};
    if (c.classifierBias) // classifier_bias is head.dense's bias, not the classifier's
      w.push_back({head.dense + ".bias", {c.hidden}, true});
    appendNorm(w, c, kHeadNorm, true);
    w.push_back({head.out + ".weight", {c.numLabels, c.hidden}, true});
    w.push_back({head.out + ".bias", {c.numLabels}, true});
    return w;
  }
  mlir::Value emitClassifier(EncoderEmitter &e, mlir::Value hidden) const override {
    const ModelConfig &c = e.config();
    ClassifierWeightNames head = llvm::cantFail(classifierNames(c));
    mlir::Value pooled = e.pool(hidden, c.classifierPooling, "head");
    mlir::Value dense = e.activation(e.linear(pooled, head.dense, c.hidden), c.classifierAct, head.dense);
    return e.linear(e.layernorm(dense, kHeadNorm), head.out, c.numLabels);
  }

  mlir::Value emitEncoder(EncoderEmitter &e) const override {
    const ModelConfig &c = e.config();
    ModelWeightNames n = weightNames(c);
    mlir::Value x = e.embeddings(n);
    for (size_t i = 0; i < n.layers.size(); ++i) {
      const LayerWeightNames &l = n.layers[i];
      const ModelConfig::LayerAttention &kind = c.layerAttention[i];
      const std::string attn = l.query.substr(0, l.query.rfind('.'));
      mlir::Value h = l.attnNorm.empty() ? x : e.layernorm(x, l.attnNorm);
      llvm::SmallVector<mlir::Value> qkv = e.split(e.linear(h, l.query, 3 * c.hidden), 3, l.query);
      mlir::Value q = e.rotary(qkv[0], c.heads, kind.ropeTheta, attn + ".rotary_emb");
      mlir::Value k = e.rotary(qkv[1], c.heads, kind.ropeTheta, attn + ".rotary_emb");
      mlir::Value o = e.linear(e.attention(q, k, qkv[2], kind, attn), l.attnOut, c.hidden);
      x = e.add(o, x, l.attnOut);
      mlir::Value g = e.gatedActivation(e.linear(e.layernorm(x, l.outNorm), l.inter, 2 * c.intermediate), l.inter);
      x = e.add(e.linear(g, l.out, c.hidden), x, l.out);
    }
    return e.layernorm(x, "final_norm");
  }

private:
  static constexpr const char *kHeadNorm = "head.norm";

  /// A norm's gamma and beta (all-zero unless norm_bias).
  static void appendNorm(std::vector<WeightSpec> &w, const ModelConfig &c, const std::string &mod, bool unprefixed) {
    w.push_back({mod + ".weight", {c.hidden}, unprefixed});
    w.push_back({mod + ".bias", {c.hidden}, unprefixed, /*zeros=*/!c.normBias});
  }

  /// Each layer global or local (layer_types, else every
  /// global_attn_every_n_layers-th global from layer 0), with its theta.
  static llvm::Error readLayers(const ConfigFields &f, ModelConfig &c) {
    int64_t every = 3, window = 128;
    if (auto e = f.getInt("global_attn_every_n_layers", every, 3))
      return e;
    if (auto e = f.getInt("local_attention", window, 128))
      return e;
    double globalTheta = 160000.0, localTheta = 10000.0;
    if (auto e = readLayerRopeTheta(f, kGlobal, "global_rope_theta", 160000.0, globalTheta))
      return e;
    if (auto e = readLayerRopeTheta(f, kLocal, "local_rope_theta", 10000.0, localTheta))
      return e;
    auto sliding = readSlidingLayers(f, c.layers, [&](int64_t i) { return i % every != 0; });
    if (!sliding)
      return sliding.takeError();
    c.layerAttention.clear();
    for (bool local : *sliding)
      c.layerAttention.push_back(local ? ModelConfig::LayerAttention{window / 2, localTheta}
                                       : ModelConfig::LayerAttention{-1, globalTheta});
    c.typeVocab = 0; // no token types
    c.positionOffset = 0;
    return llvm::Error::success();
  }
};

} // namespace

/// Listed in ModelFamily.cpp.
namespace encc {
const ModelFamily &modernBertFamily() {
  static const ModernBertFamily family;
  return family;
}
} // namespace encc
