//===- JinaBert.cpp - JinaBERT (jina-embeddings-v2) -----------------------===//
//
// model_type bert with position_embedding_type alibi: jina-embeddings-v2
// (small, base; jinaai/jina-bert-implementation). BERT's config fields,
// tensor names and post-LayerNorm layers, but no position table (ALiBi:
// enc.attention {alibi}, up to max_position_embeddings = 8192 tokens) and a
// GeGLU feed-forward: mlp.gated_layers (no bias, [2I, H]), erf GELU of the
// first half times the second, mlp.wo, then mlp.layernorm of the residual
// sum. Read as text-embeddings-inference's jina.rs reads it.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/hf/HFUtil.h"
#include "frontends/hf/families/Bert.h"

using namespace encc;

namespace {

class JinaBertFamily : public BertFamily {
public:
  const ModelFamily &variant(const ConfigFields &) const override { return *this; }
  bool gatedFeedForward() const override { return true; }

  llvm::Error readConfig(const ConfigFields &f, ModelConfig &c) const override {
    if (auto e = readBertFields(f, c))
      return e;
    std::string ffn, act;
    if (auto e = f.getString("feed_forward_type", ffn, "original"))
      return e;
    if (ffn != "geglu")
      return hfError(f.path() + ": JinaBERT (position_embedding_type alibi) with feed_forward_type '" + ffn +
                     "' is not supported (supported: geglu, jina-embeddings-v2's)");
    // Jina's GeGLU is torch's nn.GELU() whatever hidden_act says, and
    // text-embeddings-inference applies hidden_act: they agree on gelu only.
    if (auto e = f.getString("hidden_act", act, "gelu"))
      return e;
    if (act != "gelu")
      return hfError(f.path() + ": JinaBERT's GeGLU with hidden_act '" + act +
                     "' is not supported (supported: gelu, the erf GELU)");
    // jina-bert-v2-qk-post-norm (jina-embeddings-v2-base-code) adds norms
    // this layer does not have.
    if (f.has("auto_map")) {
      auto map = f.getObject("auto_map");
      if (!map)
        return map.takeError();
      for (const auto &entry : (*map)->items())
        if (entry.value().is_string() && entry.value().get<std::string>().find("qk-post-norm") != std::string::npos)
          return hfError(f.path() + ": auto_map names '" + entry.value().get<std::string>() +
                         "': JinaBERT with q/k norms (jina-bert-v2-qk-post-norm) is not supported");
    }
    c.layerAttention.assign(c.layers, ModelConfig::LayerAttention{});
    for (ModelConfig::LayerAttention &l : c.layerAttention)
      l.alibi = true;
    return llvm::Error::success();
  }

  ModelWeightNames weightNames(const ModelConfig &c) const override {
    ModelWeightNames n = BertFamily::weightNames(c);
    for (int64_t i = 0; i < c.layers; ++i) {
      const std::string p = "encoder.layer." + std::to_string(i) + ".mlp.";
      n.layers[i].inter = p + "gated_layers";
      n.layers[i].out = p + "wo";
      n.layers[i].outNorm = p + "layernorm";
    }
    return n;
  }

  std::vector<WeightSpec> expectedWeights(const ModelConfig &c) const override {
    // BERT's layout under these names, but no position table (ALiBi: one
    // zero row the embedding kernel reads) and a bias-free gated Linear.
    std::vector<WeightSpec> w = BertFamily::expectedWeights(c);
    const ModelWeightNames n = weightNames(c);
    std::vector<WeightSpec> out;
    for (WeightSpec &s : w) {
      if (s.name == n.position + ".weight")
        s.shape = {1, c.hidden}, s.zeros = true;
      else if (llvm::StringRef(s.name).ends_with(".mlp.gated_layers.weight"))
        s.shape = {2 * c.intermediate, c.hidden};
      else if (llvm::StringRef(s.name).ends_with(".mlp.gated_layers.bias"))
        continue;
      out.push_back(std::move(s));
    }
    return out;
  }

  llvm::Expected<ClassifierWeightNames> classifierNames(const ModelConfig &) const override {
    return hfError("JinaBERT (position_embedding_type alibi): sequence-classification heads are not supported "
                   "yet (embedders only)");
  }

  mlir::Value emitEncoder(EncoderEmitter &e) const override {
    const ModelConfig &c = e.config();
    ModelWeightNames n = weightNames(c);
    mlir::Value x = e.embeddings(n);
    for (size_t i = 0; i < n.layers.size(); ++i) {
      const LayerWeightNames &l = n.layers[i];
      mlir::Value o = e.linear(e.selfAttention(x, l, c.layerAttention[i]), l.attnOut, c.hidden);
      mlir::Value a = e.layernorm(e.add(o, x, l.attnOut), l.attnNorm);
      mlir::Value g = e.gatedActivation(e.linear(a, l.inter, 2 * c.intermediate), l.inter);
      mlir::Value f = e.linear(g, l.out, c.hidden);
      x = e.layernorm(e.add(f, a, l.out), l.outNorm);
    }
    return x;
  }
};

} // namespace

/// BERT's variant() hands a bert config with ALiBi positions to it.
namespace encc {
const ModelFamily &jinaBertFamily() {
  static const JinaBertFamily family;
  return family;
}
} // namespace encc
