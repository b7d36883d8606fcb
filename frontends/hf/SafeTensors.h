//===- SafeTensors.h - Reader for the safetensors file format -------------===//
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// JSON ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// optional "__metadata__"}), then the data; offsets are relative to the data
// start. The file is mapped, every entry is validated when it is opened, and
// tensors are read as views of the mapping in their stored dtype.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_HF_SAFETENSORS_H
#define ENCC_FRONTENDS_HF_SAFETENSORS_H

#include "ir/WeightStore.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace encc {

struct SafeTensorInfo {
  std::string dtype; ///< as in the header: "F32", "F16", "BF16", "I64", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; ///< byte range relative to the data start
};

class SafeTensorsFile {
public:
  /// Maps and validates `path`.
  static llvm::Expected<SafeTensorsFile> open(const std::string &path);
  /// Validates an in-memory file; `path` is only used in messages.
  static llvm::Expected<SafeTensorsFile> fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                                    const std::string &path);

  const std::map<std::string, SafeTensorInfo> &tensors() const { return tensors_; }
  const SafeTensorInfo *find(const std::string &name) const;
  const std::string &path() const { return path_; }

  /// Tensor `name` (F32, F16 or BF16) as stored: a view of the mapped file,
  /// which stays mapped while the view lives.
  llvm::Expected<mlir::enc::WeightTensor> read(const std::string &name) const;

private:
  std::string path_;
  std::shared_ptr<const llvm::MemoryBuffer> buffer_;
  const uint8_t *data_ = nullptr; ///< start of the data section
  uint64_t dataSize_ = 0;
  std::map<std::string, SafeTensorInfo> tensors_;
};

/// Bytes per element of a safetensors dtype, or 0 if the dtype is unknown.
unsigned safeTensorsDTypeSize(const std::string &dtype);

} // namespace encc

#endif // ENCC_FRONTENDS_HF_SAFETENSORS_H
