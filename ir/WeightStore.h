//===- WeightStore.h - Name-keyed weights referenced by enc.weight --------===//
//
// The enc IR never prints weight data: `enc.weight "name"` refers to an entry
// of a WeightStore that travels beside the module (frontends fill it, passes
// may add to it, codegen reads it). Data is little-endian, row-major.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_IR_WEIGHTSTORE_H
#define ENC_IR_WEIGHTSTORE_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir::enc {

enum class WeightType : uint8_t { F32, I8, I32, F16, BF16 };

struct WeightTensor {
  WeightType type = WeightType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; ///< numElements() * element size

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  const float *f32() const { return reinterpret_cast<const float *>(bytes.data()); }
  float *f32() { return reinterpret_cast<float *>(bytes.data()); }
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
  uint64_t totalBytes() const {
    uint64_t n = 0;
    for (auto &kv : tensors_)
      n += kv.second.bytes.size();
    return n;
  }

private:
  std::map<std::string, WeightTensor> tensors_;
};

} // namespace mlir::enc

#endif // ENC_IR_WEIGHTSTORE_H
