//===- ArtifactBuilder.h - Writes .encm files for the runtime tests -------===//
//
// Test-only: a plain description of an artifact (every field settable, so
// tests can write deliberately wrong ones) and a writer that lays it out as
// artifact.fbs describes (FlatBuffer, 64-aligned weights, code objects,
// checksum trailer). The real writer is compiler/ArtifactWriter.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_TESTS_ARTIFACTBUILDER_H
#define ENCRT_TESTS_ARTIFACTBUILDER_H

#include "encrt/artifact_generated.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace encrt::test {

struct SpecValue {
  std::string name;
  encm::ValueKind kind = encm::ValueKind::Activation;
  encm::DType dtype = encm::DType::F32;
  std::vector<int64_t> shape;
  uint64_t weightOffset = 0, weightBytes = 0;
  int32_t firstStep = -1, lastStep = -1;
  std::optional<uint32_t> id; ///< default: the index
};

struct SpecStep {
  std::string kernel, op;
  std::vector<uint32_t> operands;
  uint32_t numResults = 1;
  std::vector<int64_t> iattrs;
  std::vector<float> fattrs;
};

struct SpecCode {
  std::string target;
  std::vector<std::string> features;
  std::vector<uint8_t> bytes;
  std::optional<uint64_t> offset, size; ///< default: where it is written
  std::optional<std::vector<uint8_t>> sha256; ///< default: SHA-256 of bytes
};

struct SpecTokenizer {
  std::vector<std::string> vocab;
  int32_t unkId = 1, clsId = 2, sepId = 3, padId = 0;
  /// Byte-level BPE instead of WordPiece: these, and unkId (-1: none).
  bool bpe = false;
  std::vector<std::pair<int32_t, int32_t>> merges;
  std::vector<std::pair<std::string, int32_t>> added; ///< special, not normalized
  std::vector<int32_t> templateIds;
  std::vector<int32_t> pairTemplateIds, pairTypeIds; ///< BPE / Unigram text pairs
  encm::BpeSplit bpeSplit = encm::BpeSplit::Gpt2;      ///< BPE's pre-tokenizer regex
  encm::BpeAlphabet bpeAlphabet = encm::BpeAlphabet::Bytes; ///< BPE's symbols (Chars: SentencePiece BPE)
  encm::OffsetTrim offsetTrim = encm::OffsetTrim::None; ///< Unrecorded: as an artifact before 9.6
  /// The decoder: WordPiece's ("##", clean-up), ByteLevel or Metaspace ("▁")
  /// by the kind; false: none recorded, as an artifact before 9.6.
  bool recordDecoder = true;
  /// Unigram instead: these scores (one per piece), added, templateIds,
  /// unkId, and one precompiled charsmap normalizer when not empty.
  bool unigram = false;
  std::vector<double> scores;
  std::string charsmap;
  /// Schema 9.9: written as components (Tokenizer.pipeline) from the fields
  /// above, with these overrides for damaged cases; the writer then adds
  /// feature "tokenizer-components" unless omitFeature.
  struct Pipeline {
    /// Raw union types (any byte, NONE and unknown ones included), each
    /// given a table of its type (an unknown one an empty table); nullopt:
    /// what the kind implies (BertNormalizer / Precompiled; BertPreTokenizer,
    /// ByteLevel, Metaspace).
    std::optional<std::vector<uint8_t>> normalizers, preTokenizers;
    std::optional<uint8_t> model, postProcessor;
    encm::OffsetTrim offsetTrim = encm::OffsetTrim::None;
    bool flatVocabToo = false, omitFeature = false;
  };
  std::optional<Pipeline> pipeline;
};

/// A Model.token_heads entry.
struct SpecTokenRole {
  std::string name;
  int32_t markerId = -1, maxLength = 0, expansionId = -1;
  bool expansionAttended = false;
  std::vector<int32_t> skipIds;
};

struct SpecTokenHead {
  encm::TokenHeadKind kind = encm::TokenHeadKind::MultiVector;
  int32_t skipLeading = 0;
  std::vector<int32_t> skipIds;
  std::vector<SpecTokenRole> roles; ///< empty: none written
};

/// A CudaPlan (its values, steps, inputs and outputs by id).
struct SpecCudaPlan {
  std::vector<SpecValue> values;
  std::vector<SpecStep> steps;
  std::vector<uint32_t> inputs, outputs;
  uint32_t codeObject = 0;
};

struct ArtifactSpec {
  uint32_t schemaVersion, schemaMinor = 0;
  std::vector<std::string> requiredFeatures; ///< Model.required_features (empty: none written)
  std::string architecture = "bert";
  encm::Pooling pooling = encm::Pooling::Mean;
  int32_t hiddenSize = 0, numLayers = 1, numHeads = 1, vocabSize = 0,
          maxSeq = 0;
  bool normalize = false;
  std::vector<SpecValue> values;
  std::vector<SpecStep> steps;
  /// Metadata.type_vocab_size / num_labels / score_activation.
  int32_t typeVocabSize = 0, numLabels = 0;
  std::string scoreActivation;
  std::vector<uint32_t> inputs, outputs;
  std::vector<uint8_t> weights;                 ///< the weights region
  std::optional<uint64_t> weightsOffset, weightsSize; ///< default: actual
  std::vector<SpecCode> codes;
  std::optional<SpecTokenizer> tokenizer;
  /// Set: a WeightsFill table with this seed, and `weights` are not written
  /// (weights_size still defaults to their size).
  std::optional<uint64_t> weightsFillSeed;
  std::optional<SpecCudaPlan> cuda;
  /// Metadata.prompts (name, text) and default_prompt (null: none written).
  std::vector<std::pair<std::string, std::string>> prompts;
  std::optional<std::string> defaultPrompt;
  encm::Similarity similarity = encm::Similarity::Cosine; ///< Metadata.similarity
  std::optional<std::vector<std::string>> labels; ///< Metadata.labels (null: none written)
  int32_t embeddingDim = 0;                       ///< Metadata.embedding_dim
  std::vector<SpecTokenHead> tokenHeads;          ///< Model.token_heads (empty: none written)
};

/// The complete file, trailer included.
std::vector<uint8_t> writeArtifact(const ArtifactSpec &spec);

/// Recomputes the trailer checksum over [0, size - 16).
void resealChecksum(std::vector<uint8_t> &file);

void writeFile(const std::string &path, const std::vector<uint8_t> &bytes);
std::vector<uint8_t> readFile(const std::string &path);

/// The test model of the runtime tests (hidden 32, vocab 50, max_seq 64):
///   emb = table[ids] + bias; scaled = 0.5 * emb; hidden = scaled + emb;
///   pooled = mean of hidden over valid tokens.
/// `kernels` is the code object (TestKernels.cpp built as a shared object).
struct TestModel {
  static constexpr int32_t kHidden = 32, kVocab = 50, kMaxSeq = 64;
  static float table(int32_t id, int32_t h);
  static float bias(int32_t h);
  /// The expected hidden row of token `id` (1.5 * (table[id] + bias)).
  static float expected(int32_t id, int32_t h) {
    return 1.5f * (table(id, h) + bias(h));
  }
  static ArtifactSpec spec(const std::vector<uint8_t> &kernels,
                           bool pooled = true);
};

} // namespace encrt::test

#endif // ENCRT_TESTS_ARTIFACTBUILDER_H
