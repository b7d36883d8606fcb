//===- Roberta.cpp - RoBERTa, XLM-R and CamemBERT -------------------------===//
//
// BERT's graph and tensor names, with positions offset by pad_token_id + 1,
// checkpoints under "roberta." (or the model_type), <s> </s> special tokens
// and BPE / Unigram tokenizers (then token ids only).
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ConfigFields.h"
#include "frontends/hf/families/Bert.h"

using namespace encc;

namespace {

class RobertaFamily : public BertFamily {
public:
  llvm::ArrayRef<llvm::StringRef> modelTypes() const override {
    static const llvm::StringRef types[] = {"roberta", "xlm-roberta", "camembert"};
    return types;
  }
  llvm::Error readConfig(const ConfigFields &f, ModelConfig &c) const override {
    if (auto e = BertFamily::readConfig(f, c))
      return e;
    int64_t pad = 1;
    if (auto e = f.getInt("pad_token_id", pad, 1, 0))
      return e;
    c.positionOffset = pad + 1;
    c.positionPadId = pad;
    return llvm::Error::success();
  }
  std::vector<std::string> checkpointPrefixes(const ModelConfig &c) const override {
    return {"roberta.", c.modelType + ".", ""};
  }
  SpecialTokenTexts specialTokens() const override { return {"<unk>", "<s>", "</s>", "<pad>"}; }
  llvm::Expected<ClassifierWeightNames> classifierNames(const ModelConfig &) const override {
    // RobertaClassificationHead: dense + tanh on <s>, then out_proj; both
    // outside "roberta.".
    return ClassifierWeightNames{"classifier.dense", "classifier.out_proj", /*denseUnprefixed=*/true,
                                 /*outUnprefixed=*/true};
  }
  bool vocabularyOptional() const override { return true; }
  std::string sentencePieceFile(const ModelConfig &c) const override {
    return c.modelType == "xlm-roberta" ? "sentencepiece.bpe.model" : "";
  }
};

} // namespace

/// Listed in ModelFamily.cpp.
namespace encc {
const ModelFamily &robertaFamily() {
  static const RobertaFamily family;
  return family;
}
} // namespace encc
