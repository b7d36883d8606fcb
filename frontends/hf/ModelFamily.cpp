//===- ModelFamily.cpp - The family registry and the BERT defaults --------===//
//
// A new family: a file under families/ defining `const ModelFamily &xFamily()`,
// and one line in each list below. The defaults of ModelFamily (BERT's tensor
// layout and post-LayerNorm encoder) follow the registry.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/ModelFamily.h"
#include "frontends/hf/EncoderEmitter.h"
#include "frontends/hf/HFUtil.h"

namespace encc {
const ModelFamily &bertFamily();
const ModelFamily &robertaFamily();
const ModelFamily &distilBertFamily();
const ModelFamily &mpnetFamily();
} // namespace encc

using namespace encc;

static llvm::ArrayRef<const ModelFamily *> allFamilies() {
  static const ModelFamily *const families[] = {
      &bertFamily(),
      &robertaFamily(),
      &distilBertFamily(),
      &mpnetFamily(),
  };
  return families;
}

const ModelFamily *encc::findModelFamily(llvm::StringRef modelType) {
  for (const ModelFamily *f : allFamilies())
    for (llvm::StringRef t : f->modelTypes())
      if (t == modelType)
        return f;
  return nullptr;
}

std::string encc::supportedModelTypes() {
  std::string all;
  for (const ModelFamily *f : allFamilies())
    for (llvm::StringRef t : f->modelTypes())
      all += (all.empty() ? "" : ", ") + t.str();
  return all;
}

llvm::Expected<ClassifierWeightNames> ModelFamily::classifierNames(const ModelConfig &c) const {
  return hfError("model_type '" + c.modelType +
                 "': sequence-classification heads are not supported for this family (supported: bert, roberta, "
                 "xlm-roberta, camembert)");
}

std::vector<WeightSpec> ModelFamily::expectedWeights(const ModelConfig &c) const {
  ModelWeightNames n = weightNames(c);
  int64_t H = c.hidden, I = c.intermediate;
  std::vector<WeightSpec> w;
  auto dense = [&](const std::string &mod, int64_t out, int64_t in) {
    w.push_back({mod + ".weight", {out, in}});
    w.push_back({mod + ".bias", {out}});
  };
  auto norm = [&](const std::string &mod) {
    w.push_back({mod + ".weight", {H}});
    w.push_back({mod + ".bias", {H}});
  };
  w.push_back({n.word + ".weight", {c.vocab, H}});
  w.push_back({n.position + ".weight", {c.maxPositions, H}});
  w.push_back({n.tokenType + ".weight", {n.tokenTypeSynthetic ? 1 : c.typeVocab, H}});
  norm(n.embNorm);
  for (const LayerWeightNames &l : n.layers) {
    dense(l.query, H, H);
    dense(l.key, H, H);
    dense(l.value, H, H);
    dense(l.attnOut, H, H);
    norm(l.attnNorm);
    dense(l.inter, I, H);
    dense(l.out, H, I);
    norm(l.outNorm);
  }
  return w;
}

mlir::Value ModelFamily::emitEncoder(EncoderEmitter &e) const {
  ModelWeightNames n = weightNames(e.config());
  mlir::Value x = e.embeddings(n);
  for (const LayerWeightNames &l : n.layers)
    x = e.postLayerNormLayer(x, l);
  return x;
}
