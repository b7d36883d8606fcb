//===- TinyModel.h - Tiny random Hugging Face encoder models -----*- C++ -*-===//
//
// Writes small, deterministic, random BERT/RoBERTa checkpoints as real Hugging
// Face folders (config.json, model.safetensors, vocab.txt, tokenizer_config.json
// and, with pooling, the sentence-transformers layout), and returns the exact
// weights (after dtype rounding) for the float64 reference encoder.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_SUPPORT_TINYMODEL_H
#define ENCC_TESTS_SUPPORT_TINYMODEL_H

#include "tests/support/Safetensors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace encc::testing {

struct TinyModelSpec {
  /// "bert" | "roberta" | "xlm-roberta" (RoBERTa's layout) | "distilbert" |
  /// "mpnet" (RoBERTa's ids and positions, no token types, MPNet's tensor
  /// names and relative position bias table)
  std::string modelType = "bert";
  int hidden = 64;
  int layers = 2;
  int heads = 2;
  int intermediate = 128;
  int vocab = 120;
  /// Rows of the position table. For roberta the ids start at 2, so it must
  /// be at least seqLen + 2.
  int maxPositions = 64;
  int typeVocab = 2;
  std::string act = "gelu"; ///< gelu | gelu_new | gelu_pytorch_tanh | gelu_fast | relu
  double eps = 1e-12;
  uint64_t seed = 1;
  std::string pooling = "mean"; ///< "none" | "cls" | "mean"
  bool normalize = true;        ///< adds 2_Normalize (only with pooling)
  std::string dtype = "F32";    ///< F32 | F16 | BF16 (storage dtype)
  /// Prepended to every tensor name, e.g. "bert." (all-MiniLM-L6-v2 has none).
  std::string weightPrefix;
  /// Linear weights are U(-g, g) / sqrt(in) with g = linearGain. Above 1 the
  /// GELU inputs reach |x| of 2 to 4, where the erf and tanh forms differ by
  /// up to 5e-4, and attention logits grow until their scale matters.
  double linearGain = 1.0;
  /// > 0: a *ForSequenceClassification checkpoint (a cross-encoder) with this
  /// many labels: BERT's pooler (under the prefix) and "classifier", or
  /// RoBERTa's "classifier.dense" / "classifier.out_proj". Needs pooling "none".
  int numLabels = 0;

  /// config.json's pad_token_id: 0 for bert, 1 for roberta.
  /// RoBERTa's layout (roberta, xlm-roberta): <s> <pad> </s> <unk>, positions offset.
  bool robertaLayout() const { return modelType == "roberta" || modelType == "xlm-roberta" || mpnet(); }
  bool mpnet() const { return modelType == "mpnet"; }
  int padTokenId() const { return robertaLayout() ? 1 : 0; }
  /// First position id: pad_token_id + 1 = 2 for roberta, 0 for bert.
  int positionOffset() const { return robertaLayout() ? 2 : 0; }
  /// Throws std::invalid_argument naming the bad field.
  void validate() const;
};

struct TinyModel {
  std::string dir;
  TinyModelSpec spec;
  /// Tensor name (with spec.weightPrefix) -> values exactly as stored
  /// (already rounded to spec.dtype), row-major, HF shapes.
  WeightMap weights;
  ShapeMap shapes;
};

/// The checkpoint name of a layer tensor given by its BERT name (without the
/// prefix): MPNet renames the attention's ("attention.self.query" ->
/// "attention.attn.q", "attention.output.LayerNorm" -> "attention.LayerNorm").
std::string layerTensorName(const TinyModelSpec &spec, const std::string &bertName);

/// MPNet's relative position bias table [kMpnetBuckets, heads] (no prefix).
constexpr const char *kMpnetBiasTable = "encoder.relative_attention_bias.weight";
constexpr int kMpnetBuckets = 32;

/// A classification head's tensor names (without .weight/.bias): dense
/// (under spec.weightPrefix when densePrefixed) and out (never prefixed).
struct ClassifierNames {
  std::string dense, out;
  bool densePrefixed;
};
ClassifierNames classifierNames(const TinyModelSpec &spec);

/// Sets the field of make-tiny-model's option `flag` ("--hidden", ...; the
/// flags without a value, like --no-normalize, are not handled here) from
/// `value`. Throws std::invalid_argument naming the flag for an unknown flag or
/// a bad value.
void applyTinyModelFlag(TinyModelSpec &spec, const std::string &flag, const std::string &value);

/// The spec make-tiny-model builds from `flagValuePairs` ("--hidden", "32",
/// ...), as recorded next to reference data. Throws like applyTinyModelFlag.
TinyModelSpec tinyModelSpecFromFlags(const std::vector<std::string> &flagValuePairs);

/// Generates the weights only (no files). Deterministic in spec.seed; each
/// tensor has its own stream derived from (seed, name).
TinyModel makeTinyWeights(const TinyModelSpec &spec);

/// Creates `dir` (and parents) and writes a complete HF model folder:
/// config.json, model.safetensors, vocab.txt, tokenizer_config.json,
/// special_tokens_map.json, and with pooling != "none" also modules.json,
/// sentence_bert_config.json, 1_Pooling/config.json (+ 2_Normalize/).
/// Throws std::runtime_error / std::invalid_argument with a one-line reason.
TinyModel writeTinyModel(const std::string &dir, const TinyModelSpec &spec);

/// The vocabulary writeTinyModel puts in vocab.txt (id = index). bert: ids 0..4
/// are [PAD] [UNK] [CLS] [SEP] [MASK]; roberta: [CLS] [PAD] [SEP] [UNK] [MASK]
/// (pad = 1 as in RoBERTa). Then punctuation, a..z, ##a..##z, common lowercase
/// words and ##pieces, then filler "tokNNN", truncated to spec.vocab.
std::vector<std::string> tinyVocab(const TinyModelSpec &spec);

} // namespace encc::testing

#endif // ENCC_TESTS_SUPPORT_TINYMODEL_H
