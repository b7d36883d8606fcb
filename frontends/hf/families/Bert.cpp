//===- Bert.cpp - The BERT family -----------------------------------------===//
#include "frontends/hf/families/Bert.h"
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/HFUtil.h"

using namespace encc;

namespace encc {
const ModelFamily &jinaBertFamily(); // families/JinaBert.cpp
const ModelFamily &bertFamily();
} // namespace encc

llvm::ArrayRef<llvm::StringRef> BertFamily::modelTypes() const {
  static const llvm::StringRef types[] = {"bert"};
  return types;
}

const ModelFamily &BertFamily::variant(const ConfigFields &f) const {
  // Only model_type bert (not the families derived from it): JinaBERT is a
  // bert config whose positions are ALiBi. A malformed field is readConfig's
  // error.
  std::string type, positions;
  if (auto e = f.getString("model_type", type, ""))
    llvm::consumeError(std::move(e));
  if (auto e = f.getString("position_embedding_type", positions, "absolute"))
    llvm::consumeError(std::move(e));
  return type == "bert" && positions == "alibi" ? jinaBertFamily() : *this;
}

llvm::Error BertFamily::readBertFields(const ConfigFields &f, ModelConfig &c) {
  if (auto e = readEncoderDims(f, c))
    return e;
  if (auto e = f.getInt("type_vocab_size", c.typeVocab, 2))
    return e;
  return f.getDouble("layer_norm_eps", c.layerNormEps, 1e-12);
}

llvm::Error BertFamily::readConfig(const ConfigFields &f, ModelConfig &c) const {
  if (auto e = readBertFields(f, c))
    return e;
  std::string posType;
  if (auto e = f.getString("position_embedding_type", posType, "absolute"))
    return e;
  if (posType != "absolute")
    return hfError(f.path() + ": position_embedding_type '" + posType +
                   "' is not supported (supported: absolute; alibi: JinaBERT, model_type bert only)");
  return llvm::Error::success();
}

ModelWeightNames BertFamily::weightNames(const ModelConfig &c) const {
  ModelWeightNames n;
  n.word = "embeddings.word_embeddings";
  n.position = "embeddings.position_embeddings";
  n.tokenType = "embeddings.token_type_embeddings";
  n.embNorm = "embeddings.LayerNorm";
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string p = "encoder.layer." + std::to_string(i) + ".";
    n.layers.push_back({p + "attention.self.query", p + "attention.self.key", p + "attention.self.value",
                        p + "attention.output.dense", p + "attention.output.LayerNorm", p + "intermediate.dense",
                        p + "output.dense", p + "output.LayerNorm"});
  }
  return n;
}

std::vector<std::string> BertFamily::checkpointPrefixes(const ModelConfig &) const { return {"bert.", ""}; }

llvm::Expected<ClassifierWeightNames> BertFamily::classifierNames(const ModelConfig &) const {
  // BertForSequenceClassification: the pooler (dense + tanh on [CLS]) inside
  // "bert.", then "classifier".
  return ClassifierWeightNames{"pooler.dense", "classifier", /*denseUnprefixed=*/false, /*outUnprefixed=*/true};
}

llvm::Expected<MlmHeadNames> BertFamily::mlmHeadNames(const ModelConfig &c) const {
  if (this != &bertFamily()) // RoBERTa's lm_head, JinaBERT's: not read yet
    return ModelFamily::mlmHeadNames(c);
  return MlmHeadNames{"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.bias"};
}

SpecialTokenTexts BertFamily::specialTokens() const { return {"[UNK]", "[CLS]", "[SEP]", "[PAD]"}; }

/// Listed in ModelFamily.cpp.
namespace encc {
const ModelFamily &bertFamily() {
  static const BertFamily family;
  return family;
}
} // namespace encc
