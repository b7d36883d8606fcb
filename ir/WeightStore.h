//===- WeightStore.h - Name-keyed weights referenced by enc.weight --------===//
//
// The enc IR never prints weight data: `enc.weight "name"` refers to an entry
// of a WeightStore that travels beside the module (frontends fill it, passes
// may add to it, codegen reads it). Data is little-endian, row-major.
//
// A tensor's bytes are held in one of three ways, so that a model is never
// copied whole before the artifact is written:
//   - owned: a buffer the compiler made (quantised weights, small tensors);
//   - a view: bytes something else keeps alive, such as a memory-mapped
//     checkpoint (weights stay in their stored dtype, f32, f16 or bf16);
//   - deferred: a function that writes the bytes when they are read (a
//     concatenation, a dtype conversion, a kernel's packed layout), run by the
//     artifact writer one tensor at a time.
// Copies of a tensor share its bytes; bytes are never changed once shared.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_IR_WEIGHTSTORE_H
#define ENC_IR_WEIGHTSTORE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::enc {

enum class WeightType : uint8_t { F32, I8, I32, F16, BF16 };

/// Bytes per element of `type`.
size_t weightTypeSize(WeightType type);
/// "f32", "i8", "i32", "f16", "bf16".
const char *weightTypeName(WeightType type);
/// A float type a checkpoint stores: f32, f16 or bf16 (a tensor the IR calls
/// f32 may be held in any of them until codegen widens it).
inline bool isStoredFloat(WeightType type) {
  return type == WeightType::F32 || type == WeightType::F16 || type == WeightType::BF16;
}

class WeightTensor {
public:
  /// Writes exactly byteSize() bytes to `out`.
  using Producer = std::function<void(uint8_t *out)>;

  WeightType type = WeightType::F32;
  std::vector<int64_t> shape;

  WeightTensor() = default;
  /// A zero-filled buffer of `shape`, written through mutableData() before
  /// the tensor is stored or copied.
  static WeightTensor allocate(WeightType type, std::vector<int64_t> shape);
  /// The bytes at `data` (byteSize() of them), kept alive by `owner`.
  static WeightTensor view(WeightType type, std::vector<int64_t> shape, std::shared_ptr<const void> owner,
                           const uint8_t *data);
  /// Bytes written by `produce` each time they are read.
  static WeightTensor deferred(WeightType type, std::vector<int64_t> shape, Producer produce);

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t byteSize() const { return size_t(numElements()) * weightTypeSize(type); }
  /// Owned or a view (not deferred): data() may be called.
  bool resident() const { return produce_ == nullptr; }

  /// The bytes of a resident tensor (a fatal error on a deferred one: read()).
  const uint8_t *data() const;
  const float *f32() const { return reinterpret_cast<const float *>(data()); }
  /// The buffer of a tensor made by allocate() and not yet shared.
  uint8_t *mutableData();
  float *mutableF32() { return reinterpret_cast<float *>(mutableData()); }

  /// This tensor with its bytes in memory: itself when resident, else a fresh
  /// owned buffer filled by the producer (hold it only while it is needed).
  WeightTensor read() const;

  /// Elements [begin, begin + count) of a resident tensor as f32 (integers
  /// converted to their float values).
  void toF32(int64_t begin, int64_t count, float *out) const;

  /// Every element as f32, as toF32 (a deferred tensor is produced).
  std::vector<float> floats() const;

  /// This tensor as f32: itself, or deferred widening of f16 / bf16.
  WeightTensor widenedToF32() const;
  /// This tensor as `to` (f16 or bf16): itself, or deferred rounding (nearest
  /// even) of its f32, f16 or bf16 values.
  WeightTensor roundedTo(WeightType to) const;
  /// The tensors' rows one after another ([sum of dim 0, rest]): deferred.
  /// All parts have the same rank and trailing dims; float parts of
  /// different dtypes are joined in f32 (widenedToF32).
  static WeightTensor concatRows(std::vector<WeightTensor> parts);

private:
  std::shared_ptr<const void> keep_; ///< owns the bytes of an owned tensor or a view
  const uint8_t *data_ = nullptr;
  uint8_t *mutable_ = nullptr; ///< allocate()'s buffer
  Producer produce_;
};

class WeightStore {
public:
  /// Adds or replaces `name`.
  void set(const std::string &name, WeightTensor t) { tensors_[name] = std::move(t); }
  /// Moves `from` to `to`; false (nothing changed) when `from` is missing or
  /// `to` is taken.
  bool rename(const std::string &from, const std::string &to) {
    auto it = tensors_.find(from);
    if (it == tensors_.end() || tensors_.count(to))
      return false;
    auto node = tensors_.extract(it);
    node.key() = to;
    tensors_.insert(std::move(node));
    return true;
  }
  const WeightTensor *find(const std::string &name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
  }
  WeightTensor *find(const std::string &name) {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, WeightTensor> &all() const { return tensors_; }
  /// The bytes every tensor will have (deferred ones included).
  uint64_t totalBytes() const {
    uint64_t n = 0;
    for (auto &kv : tensors_)
      n += kv.second.byteSize();
    return n;
  }

private:
  std::map<std::string, WeightTensor> tensors_;
};

} // namespace mlir::enc

#endif // ENC_IR_WEIGHTSTORE_H
