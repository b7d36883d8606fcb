//===- Bert.h - The BERT family, the base of BERT-shaped families ---------===//
#ifndef ENCC_FRONTENDS_HF_FAMILIES_BERT_H
#define ENCC_FRONTENDS_HF_FAMILIES_BERT_H

#include "frontends/hf/ModelFamily.h"

namespace encc {

/// bert: hidden_size / num_hidden_layers / ... in config.json, tensors under
/// embeddings.* and encoder.layer.N.*, WordPiece with [CLS] [SEP], absolute
/// positions from 0, the post-LayerNorm encoder. Families that differ only in
/// a few of these (roberta) derive from it.
class BertFamily : public ModelFamily {
public:
  llvm::ArrayRef<llvm::StringRef> modelTypes() const override;
  /// JinaBERT (families/JinaBert.cpp) for position_embedding_type alibi.
  const ModelFamily &variant(const ConfigFields &fields) const override;
  llvm::Error readConfig(const ConfigFields &fields, ModelConfig &config) const override;
  ModelWeightNames weightNames(const ModelConfig &config) const override;
  std::vector<std::string> checkpointPrefixes(const ModelConfig &config) const override;
  SpecialTokenTexts specialTokens() const override;
  llvm::Expected<ClassifierWeightNames> classifierNames(const ModelConfig &config) const override;
  /// BertForMaskedLM's cls.predictions (model_type bert only).
  llvm::Expected<MlmHeadNames> mlmHeadNames(const ModelConfig &config) const override;

protected:
  /// The dims, type_vocab_size and layer_norm_eps, as BERT reads them.
  static llvm::Error readBertFields(const ConfigFields &fields, ModelConfig &config);
};

} // namespace encc

#endif // ENCC_FRONTENDS_HF_FAMILIES_BERT_H
