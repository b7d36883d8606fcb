//===- WeightStore.cpp - Owned, viewed and deferred weight bytes ----------===//
#include "ir/WeightStore.h"
#include "encrt/float16.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cstring>

using namespace mlir::enc;

size_t mlir::enc::weightTypeSize(WeightType type) {
  switch (type) {
  case WeightType::F32: return 4;
  case WeightType::I8: return 1;
  case WeightType::I32: return 4;
  case WeightType::F16: return 2;
  case WeightType::BF16: return 2;
  }
  llvm::report_fatal_error("weightTypeSize: unknown WeightType");
}

const char *mlir::enc::weightTypeName(WeightType type) {
  switch (type) {
  case WeightType::F32: return "f32";
  case WeightType::I8: return "i8";
  case WeightType::I32: return "i32";
  case WeightType::F16: return "f16";
  case WeightType::BF16: return "bf16";
  }
  llvm::report_fatal_error("weightTypeName: unknown WeightType");
}

WeightTensor WeightTensor::allocate(WeightType type, std::vector<int64_t> shape) {
  WeightTensor t;
  t.type = type;
  t.shape = std::move(shape);
  auto buffer = std::make_shared<std::vector<uint8_t>>(t.byteSize(), 0);
  t.data_ = t.mutable_ = buffer->data();
  t.keep_ = std::move(buffer);
  return t;
}

WeightTensor WeightTensor::view(WeightType type, std::vector<int64_t> shape, std::shared_ptr<const void> owner,
                                const uint8_t *data) {
  WeightTensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.keep_ = std::move(owner);
  t.data_ = data;
  return t;
}

WeightTensor WeightTensor::deferred(WeightType type, std::vector<int64_t> shape, Producer produce) {
  WeightTensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.produce_ = std::move(produce);
  return t;
}

const uint8_t *WeightTensor::data() const {
  if (produce_)
    llvm::report_fatal_error("WeightTensor::data() on a deferred tensor (read() it first)");
  return data_;
}

uint8_t *WeightTensor::mutableData() {
  if (!mutable_ && byteSize() != 0)
    llvm::report_fatal_error("WeightTensor::mutableData() on a tensor not made by allocate()");
  return mutable_;
}

WeightTensor WeightTensor::read() const {
  if (!produce_)
    return *this;
  WeightTensor t = allocate(type, shape);
  produce_(t.mutableData());
  return t;
}

void WeightTensor::toF32(int64_t begin, int64_t count, float *out) const {
  const uint8_t *src = data() + size_t(begin) * weightTypeSize(type);
  switch (type) {
  case WeightType::F32:
    if (count > 0)
      std::memcpy(out, src, size_t(count) * 4);
    return;
  case WeightType::F16:
  case WeightType::BF16: {
    const bool half = type == WeightType::F16;
    for (int64_t i = 0; i < count; ++i) {
      const uint16_t v = uint16_t(src[2 * i] | src[2 * i + 1] << 8);
      out[i] = half ? encm_f16_to_f32(v) : encm_bf16_to_f32(v);
    }
    return;
  }
  case WeightType::I8:
    for (int64_t i = 0; i < count; ++i)
      out[i] = float(int8_t(src[i]));
    return;
  case WeightType::I32:
    for (int64_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      out[i] = float(v);
    }
    return;
  }
  llvm::report_fatal_error("WeightTensor::toF32: unknown WeightType");
}

std::vector<float> WeightTensor::floats() const {
  const WeightTensor in = read();
  std::vector<float> out(size_t(in.numElements()));
  in.toF32(0, in.numElements(), out.data());
  return out;
}

WeightTensor WeightTensor::widenedToF32() const {
  if (type == WeightType::F32)
    return *this;
  WeightTensor src = *this;
  return deferred(WeightType::F32, shape, [src](uint8_t *out) {
    WeightTensor in = src.read();
    in.toF32(0, in.numElements(), reinterpret_cast<float *>(out));
  });
}

WeightTensor WeightTensor::roundedTo(WeightType to) const {
  if (to != WeightType::F16 && to != WeightType::BF16)
    llvm::report_fatal_error(llvm::Twine("WeightTensor::roundedTo ") + weightTypeName(to));
  if (type == to)
    return *this;
  WeightTensor src = *this;
  return deferred(to, shape, [src, to](uint8_t *out) {
    WeightTensor in = src.read();
    constexpr int64_t kChunk = 4096;
    float row[kChunk];
    for (int64_t at = 0, n = in.numElements(); at < n; at += kChunk) {
      const int64_t count = std::min(kChunk, n - at);
      in.toF32(at, count, row);
      for (int64_t i = 0; i < count; ++i) {
        const uint16_t b = to == WeightType::F16 ? encm_f32_to_f16(row[i]) : encm_f32_to_bf16(row[i]);
        std::memcpy(out + 2 * (at + i), &b, 2);
      }
    }
  });
}

WeightTensor WeightTensor::concatRows(std::vector<WeightTensor> parts) {
  if (parts.empty())
    llvm::report_fatal_error("WeightTensor::concatRows of no parts");
  std::vector<int64_t> shape = parts.front().shape;
  shape[0] = 0;
  bool sameType = true;
  for (const WeightTensor &p : parts) {
    if (p.shape.size() != shape.size() || !std::equal(p.shape.begin() + 1, p.shape.end(), shape.begin() + 1))
      llvm::report_fatal_error("WeightTensor::concatRows of parts with different trailing dims");
    sameType = sameType && p.type == parts.front().type;
    shape[0] += p.shape[0];
  }
  if (!sameType) // float parts stored in different dtypes: joined in f32
    for (WeightTensor &p : parts)
      p = p.widenedToF32();
  const WeightType type = parts.front().type;
  return deferred(type, std::move(shape), [parts = std::move(parts)](uint8_t *out) {
    for (const WeightTensor &p : parts) {
      WeightTensor in = p.read();
      if (in.byteSize() != 0)
        std::memcpy(out, in.data(), in.byteSize());
      out += in.byteSize();
    }
  });
}
