//===- Artifact.h - A mapped and verified .encm file ----------------------===//
//
// Artifact::open maps a .encm file read-only and verifies all of it before
// anything uses it: size and trailer checksum, file identifier, the
// FlatBuffers verifier, the schema version, then the semantic rules (every
// value id, offset, size, shape, live range and tokenizer id in range). After
// open succeeds every pointer the rest of the runtime derives from the table
// is in bounds. Immutable; thread-safe.
//
// An artifact compiled with --weights=random:SEED (Model.weights_fill) stores
// no weight bytes: open allocates weights_size bytes and fills every Weight
// value of both plans from (seed, weight_offset) by dtype (fillRandomWeights).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_ARTIFACT_H
#define ENCRT_ARTIFACT_H

#include "Integrity.h"
#include "encrt/artifact_generated.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace encrt::rt {

/// Bytes per element of `dtype`, 0 for an unknown value.
size_t dtypeSize(encm::DType dtype);

/// "none" | "cls" | "mean" | "last" (as encc's --pooling spells them), null
/// for a value outside the schema's enum.
const char *poolingName(encm::Pooling pooling);
/// "cosine", "dot", "euclidean", "manhattan"; nullptr for a value the schema does not name.
const char *similarityName(encm::Similarity similarity);

/// Fills `bytes` bytes at `dst` (8-byte aligned) deterministically from
/// (seed, weightOffset): F32/F16/BF16 finite values in [-0.05, 0.05], I8 in
/// [-127, 127], I32 in [-128, 127], U8 any byte. Counter-based, so any
/// 8-byte-aligned sub-range [begin, end) can be filled on its own (threads).
void fillRandomWeights(uint8_t *dst, uint64_t begin, uint64_t end, encm::DType dtype, uint64_t seed,
                       uint64_t weightOffset);

class Artifact {
public:
  /// Maps `path`, checks it against `trust` (pinned SHA-256, signature),
  /// then verifies it; throws Failure with a one-line message naming the
  /// file and the offending field.
  static std::unique_ptr<Artifact> open(const std::string &path,
                                        const TrustPolicy &trust = {});
  ~Artifact();
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;

  const encm::Model &model() const { return *model_; }
  const std::string &path() const { return path_; }
  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }

  /// The bytes of a Weight value (in the mapping, or generated at open).
  const void *weightData(const encm::Value &value) const {
    return weights_ + value.weight_offset();
  }
  /// A private copy of code object `co`'s bytes (the file could change under
  /// its mapping), checked against the SHA-256 the table records; throws
  /// Failure naming `what` when they differ.
  std::vector<uint8_t> codeObjectCopy(const encm::CodeObject &co, const std::string &what) const;
  /// The model tells token types apart (Metadata.type_vocab_size >= 2): its
  /// plans take type ids as a third input.
  bool hasTypeIds() const { return model_->metadata()->type_vocab_size() >= 2; }
  /// False for an artifact compiled for CUDA only (empty CPU plan).
  bool hasCpuPlan() const { return hasCpuPlan_; }
  /// True when the weights were generated at open (outputs are meaningless).
  bool randomWeights() const { return model_->weights_fill() != nullptr; }
  uint64_t randomWeightsSeed() const {
    return randomWeights() ? model_->weights_fill()->seed() : 0;
  }
  /// The last step that needs an Activation/Output value (last_step, or
  /// first_step when the value is never read; outputs live to the end).
  int32_t liveEnd(const encm::Value &value) const;

private:
  Artifact(std::string path, const uint8_t *data, uint64_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  void verify();
  /// The major version in range, every required feature known, and the
  /// features the fields in use need listed.
  void checkSchemaVersion();
  /// Metadata.prompts within the limits, names unique, the default one of them.
  void verifyPrompts();
  void verifySemantics();
  void verifyCodeAndTokenizer();
  void generateWeights();

  std::string path_;
  const uint8_t *data_;
  uint64_t size_;
  const encm::Model *model_ = nullptr;
  const uint8_t *weights_ = nullptr; ///< the weights region (mapped or generated)
  uint8_t *generated_ = nullptr;     ///< generated weights (anonymous mapping), or null
  uint64_t generatedSize_ = 0;
  bool hasCpuPlan_ = true;
};

} // namespace encrt::rt

#endif // ENCRT_ARTIFACT_H
