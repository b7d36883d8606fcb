//===- DistilBert.cpp - DistilBERT ----------------------------------------===//
//
// Its own config.json names (dim, n_layers, n_heads, hidden_dim, activation),
// tensors under transformer.layer.N.*, no token types (a zero [1, hidden]
// table stands in), BERT's post-LayerNorm graph and WordPiece tokens.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/ModelFamily.h"

using namespace encc;

namespace {

class DistilBertFamily : public ModelFamily {
public:
  llvm::ArrayRef<llvm::StringRef> modelTypes() const override {
    static const llvm::StringRef types[] = {"distilbert"};
    return types;
  }
  const char *activationKey() const override { return "activation"; }
  llvm::Error readConfig(const ConfigFields &f, ModelConfig &c) const override {
    if (auto e = f.getInt("dim", c.hidden))
      return e;
    if (auto e = f.getInt("n_layers", c.layers))
      return e;
    if (auto e = f.getInt("n_heads", c.heads))
      return e;
    if (auto e = f.getInt("hidden_dim", c.intermediate))
      return e;
    c.typeVocab = 0;
    c.layerNormEps = 1e-12;
    return llvm::Error::success();
  }
  ModelWeightNames weightNames(const ModelConfig &c) const override {
    ModelWeightNames n;
    n.word = "embeddings.word_embeddings";
    n.position = "embeddings.position_embeddings";
    n.tokenType = "embeddings.token_type_embeddings";
    n.embNorm = "embeddings.LayerNorm";
    n.tokenTypeSynthetic = true;
    for (int64_t i = 0; i < c.layers; ++i) {
      std::string p = "transformer.layer." + std::to_string(i) + ".";
      n.layers.push_back({p + "attention.q_lin", p + "attention.k_lin", p + "attention.v_lin",
                          p + "attention.out_lin", p + "sa_layer_norm", p + "ffn.lin1", p + "ffn.lin2",
                          p + "output_layer_norm"});
    }
    return n;
  }
  std::vector<std::string> checkpointPrefixes(const ModelConfig &) const override {
    return {"distilbert.", ""};
  }
  SpecialTokenTexts specialTokens() const override { return {"[UNK]", "[CLS]", "[SEP]", "[PAD]"}; }
};

} // namespace

/// Listed in ModelFamily.cpp.
namespace encc {
const ModelFamily &distilBertFamily() {
  static const DistilBertFamily family;
  return family;
}
} // namespace encc
