//===- ModelDescription.h - What every frontend tells the rest ------------===//
//
// The frontend-neutral facts about an imported model that the driver and the
// artifact writer need (the artifact's Metadata and Tokenizer tables), and
// what an import hands over: this, the enc module and its weights. The Hugging
// Face frontend fills it from config.json; an ONNX frontend fills it from the
// graph. No MLIR here: the artifact writer includes it.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_MODELDESCRIPTION_H
#define ENCC_FRONTENDS_MODELDESCRIPTION_H

#include <cstdint>
#include <string>
#include <vector>

namespace encc {

struct ModelDescription {
  std::string architecture; ///< the source's name for it: HF model_type ("bert", ...)
  int64_t hidden = 0, layers = 0, heads = 0, intermediate = 0, vocab = 0;
  int64_t maxSeq = 0;         ///< the compiled maximum sequence length
  std::string activation;     ///< "gelu" (erf form) | "gelu_new" (tanh form)
  double layerNormEps = 1e-12;
  std::string pooling = "none"; ///< "none" | "cls" | "mean"
  bool normalize = false;       ///< L2-normalise the pooled output
};

/// A WordPiece tokenizer as the artifact stores it.
struct TokenizerData {
  std::vector<std::string> vocab; ///< id -> token; empty if not WordPiece
  bool lowercase = true, stripAccents = true, splitChinese = true;
  int32_t unkId = -1, clsId = -1, sepId = -1, padId = -1;
  std::string note; ///< why `vocab` is empty, if it is
};

} // namespace encc

#endif // ENCC_FRONTENDS_MODELDESCRIPTION_H
