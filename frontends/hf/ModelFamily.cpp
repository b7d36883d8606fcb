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
const ModelFamily &modernBertFamily();
const ModelFamily &qwen3Family();
const ModelFamily &gemma3Family();
const ModelFamily &llamaFamily();
const ModelFamily &mistralFamily();
const ModelFamily &qwen2Family();
} // namespace encc

using namespace encc;

static llvm::ArrayRef<const ModelFamily *> allFamilies() {
  static const ModelFamily *const families[] = {
      &bertFamily(),
      &robertaFamily(),
      &distilBertFamily(),
      &mpnetFamily(),
      &modernBertFamily(),
      &qwen3Family(),
      &gemma3Family(),
      &llamaFamily(),
      &mistralFamily(),
      &qwen2Family(),
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

/// The model_types whose family names a sequence-classification head.
static std::string modelTypesWithHeads() {
  std::string all;
  for (const ModelFamily *f : allFamilies())
    for (llvm::StringRef t : f->modelTypes()) {
      ModelConfig c;
      c.modelType = t.str();
      c.family = f;
      llvm::Expected<ClassifierWeightNames> head = f->classifierNames(c);
      if (!head) {
        llvm::consumeError(head.takeError());
        continue;
      }
      all += (all.empty() ? "" : ", ") + t.str();
    }
  return all;
}

llvm::Expected<ClassifierWeightNames> ModelFamily::classifierNames(const ModelConfig &c) const {
  // modelTypesWithHeads asks every family, this default included.
  static thread_local bool listing = false;
  if (listing)
    return hfError("no head");
  listing = true;
  const std::string supported = modelTypesWithHeads();
  listing = false;
  return hfError("model_type '" + c.modelType +
                 "': sequence-classification heads are not supported for this family (supported: " + supported +
                 ")");
}

llvm::Expected<MlmHeadNames> ModelFamily::mlmHeadNames(const ModelConfig &c) const {
  return hfError("model_type '" + c.modelType +
                 "': a masked-LM head (splade pooling) is not supported for this family (supported: bert)");
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
  w.push_back({n.tokenType + ".weight", {n.tokenTypeSynthetic ? 1 : c.typeVocab, H}, false, n.tokenTypeSynthetic});
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

std::vector<WeightSpec> ModelFamily::classifierWeights(const ModelConfig &c,
                                                       const ClassifierWeightNames &head) const {
  return {{head.dense + ".weight", {c.hidden, c.hidden}, head.denseUnprefixed},
          {head.dense + ".bias", {c.hidden}, head.denseUnprefixed},
          {head.out + ".weight", {c.numLabels, c.hidden}, head.outUnprefixed},
          {head.out + ".bias", {c.numLabels}, head.outUnprefixed}};
}

mlir::Value ModelFamily::emitClassifier(EncoderEmitter &e, mlir::Value hidden) const {
  // BERT's pooler / RoBERTa's classification head: out(tanh(dense(h[CLS]))).
  // buildEncModule checked that the family names the head.
  const ModelConfig &c = e.config();
  ClassifierWeightNames head = llvm::cantFail(classifierNames(c));
  mlir::Value cls = e.pool(hidden, Pooling::Cls, "classifier");
  mlir::Value dense = e.linear(cls, head.dense, c.hidden);
  return e.linear(e.tanh(dense, head.dense), head.out, c.numLabels);
}

mlir::Value ModelFamily::emitEncoder(EncoderEmitter &e) const {
  ModelWeightNames n = weightNames(e.config());
  mlir::Value x = e.embeddings(n);
  for (const LayerWeightNames &l : n.layers)
    x = e.postLayerNormLayer(x, l);
  return x;
}
