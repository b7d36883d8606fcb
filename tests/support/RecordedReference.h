//===- RecordedReference.h - Recorded PyTorch reference data -----*- C++ -*-===//
//
// Access to tests/reference/*.json (recorded with tests/reference/
// record_minilm.py) and to the real model folders ($ENCC_MINILM_DIR,
// $ENCC_MPNET_DIR).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_SUPPORT_RECORDEDREFERENCE_H
#define ENCC_TESTS_SUPPORT_RECORDEDREFERENCE_H

#include <cstdint>
#include <string>
#include <vector>

namespace encc::testing {

/// The source folder tests/reference (absolute, fixed at configure time).
std::string referenceDataDir();

/// $ENCC_MINILM_DIR, checked to contain config.json, model.safetensors and
/// vocab.txt. Throws std::runtime_error with a clear message when the variable
/// is unset or the folder is incomplete (tests must fail, not skip).
std::string minilmDir();

/// $ENCC_MPNET_DIR (all-mpnet-base-v2), checked and failing like minilmDir.
std::string mpnetDir();

struct RecordedSentence {
  std::string text;
  std::vector<int64_t> ids; ///< with [CLS] ... [SEP]
  std::vector<double> embedding; ///< normalised sentence embedding (384)
  /// For the first 4 sentences only: last hidden state, first 8 values of
  /// tokens 0 and 1 ([2][8]); empty otherwise.
  std::vector<std::vector<double>> hiddenHead;
};

struct MinilmReference {
  std::string model;
  std::vector<RecordedSentence> sentences; ///< 64, in sentence-pairs.tsv order (a, b per line)
};

/// Loads referenceDataDir() + "/minilm_embeddings.json" (or `path`, e.g.
/// mpnet_embeddings.json: the same layout, recorded for all-mpnet-base-v2).
MinilmReference loadMinilmReference(const std::string &path = "");

/// Cosine similarity of two equally long vectors.
double cosine(const std::vector<double> &a, const std::vector<double> &b);

} // namespace encc::testing

#endif // ENCC_TESTS_SUPPORT_RECORDEDREFERENCE_H
