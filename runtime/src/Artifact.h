//===- Artifact.h - A mapped and verified .encm file ----------------------===//
//
// Artifact::open maps a .encm file read-only and verifies all of it before
// anything uses it: size and trailer checksum, file identifier, the
// FlatBuffers verifier, the schema version, then the semantic rules (every
// value id, offset, size, shape, live range and tokenizer id in range). After
// open succeeds every pointer the rest of the runtime derives from the table
// is in bounds. Immutable; thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_ARTIFACT_H
#define ENCRT_ARTIFACT_H

#include "encrt/artifact_generated.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace encrt::rt {

/// Bytes per element of `dtype`, 0 for an unknown value.
size_t dtypeSize(encm::DType dtype);

class Artifact {
public:
  /// Maps and verifies `path`; throws Failure with a one-line message naming
  /// the file and the offending field.
  static std::unique_ptr<Artifact> open(const std::string &path);
  ~Artifact();
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;

  const encm::Model &model() const { return *model_; }
  const std::string &path() const { return path_; }
  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }

  /// The bytes of a Weight value (in the mapping).
  const void *weightData(const encm::Value &value) const {
    return data_ + model_->weights_offset() + value.weight_offset();
  }
  /// The last step that needs an Activation/Output value (last_step, or
  /// first_step when the value is never read; outputs live to the end).
  int32_t liveEnd(const encm::Value &value) const;

private:
  Artifact(std::string path, const uint8_t *data, uint64_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  void verify();
  void verifySemantics();

  std::string path_;
  const uint8_t *data_;
  uint64_t size_;
  const encm::Model *model_ = nullptr;
};

} // namespace encrt::rt

#endif // ENCRT_ARTIFACT_H
