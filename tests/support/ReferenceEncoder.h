//===- ReferenceEncoder.h - Float64 reference BERT encoder -------*- C++ -*-===//
//
// A deliberately plain float64 BERT/RoBERTa encoder (nested loops, no SIMD)
// that tests compare the product against. Independent of the product code:
// it reads weights from a WeightMap (HF tensor names) and a TinyModelSpec.
//
// Padding: ids are [B][S], padded on the right, lengths[b] valid tokens. Keys
// j >= lengths[b] are excluded from the softmax entirely. Padded *query* rows
// are computed normally (they attend to the valid keys, with position id
// s + offset), so every output is defined; the product may leave padded rows
// unspecified, so comparisons should cover only rows s < lengths[b].
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_SUPPORT_REFERENCEENCODER_H
#define ENCC_TESTS_SUPPORT_REFERENCEENCODER_H

#include "tests/support/Safetensors.h"
#include "tests/support/TinyModel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace encc::testing {

struct ReferenceOutput {
  /// Last hidden state [B][S][H].
  std::vector<std::vector<std::vector<double>>> hidden;
  /// Sentence embeddings [B][H] (cls: token 0; mean: over valid tokens; then
  /// L2-normalised if spec.normalize). Empty when spec.pooling == "none".
  std::vector<std::vector<double>> pooled;
  /// spec.numLabels > 0: the classification head's logits [B][numLabels],
  /// out(tanh(dense(hidden[b][0]))) (no activation).
  std::vector<std::vector<double>> scores;
};

/// Runs the encoder. Uses spec.modelType (position offset 2 for roberta),
/// hidden/heads/layers/intermediate, act, eps, pooling, normalize; the shapes
/// of the weights must agree with the spec. Token type ids are `typeIds`
/// (rows like ids; empty: all 0). The tensor
/// name prefix is found automatically (spec.weightPrefix, "", "bert.",
/// "roberta.", "model."). Throws std::invalid_argument on bad inputs
/// (ragged ids, lengths outside [1, S], ids outside the vocab, S + offset >
/// maxPositions) and std::runtime_error on a missing or mis-shaped weight.
ReferenceOutput runReferenceEncoder(const WeightMap &weights,
                                    const TinyModelSpec &spec,
                                    const std::vector<std::vector<int64_t>> &ids,
                                    const std::vector<int64_t> &lengths,
                                    const std::vector<std::vector<int64_t>> &typeIds = {});

/// Convenience overload for a TinyModel.
ReferenceOutput runReferenceEncoder(const TinyModel &model,
                                    const std::vector<std::vector<int64_t>> &ids,
                                    const std::vector<int64_t> &lengths,
                                    const std::vector<std::vector<int64_t>> &typeIds = {});

/// Reads config.json (model_type, hidden_size, num_hidden_layers,
/// num_attention_heads, intermediate_size, vocab_size, max_position_embeddings,
/// type_vocab_size, hidden_act, layer_norm_eps) and, when present, the
/// sentence-transformers modules.json + pooling config (pooling "none" when
/// there is no modules.json). dtype/seed/weightPrefix keep their defaults.
TinyModelSpec readModelSpec(const std::string &dir);

/// A real model folder loaded for the reference (e.g. all-MiniLM-L6-v2).
struct LoadedModel {
  TinyModelSpec spec; ///< from readModelSpec, weightPrefix detected
  WeightMap weights;  ///< model.safetensors widened to double
  ShapeMap shapes;
};

/// readModelSpec(dir) + loadSafetensorsF64(dir + "/model.safetensors").
LoadedModel loadModelF64(const std::string &dir);

/// The prefix ("", "bert.", "roberta.", "model.") under which
/// "embeddings.word_embeddings.weight" exists; throws if none.
std::string detectWeightPrefix(const WeightMap &weights,
                               const std::string &preferred = "");

} // namespace encc::testing

#endif // ENCC_TESTS_SUPPORT_REFERENCEENCODER_H
