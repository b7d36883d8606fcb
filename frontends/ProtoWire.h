//===- ProtoWire.h - The protobuf wire format, read with bounds -----------===//
//
// Both protobuf files the frontends read (a SentencePiece model, an ONNX
// model) are parsed directly from the wire format: no protobuf library, no
// generated code, every length checked against what is left of the message.
// Groups (wire types 3 and 4) are refused; unknown fields are skipped.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_PROTOWIRE_H
#define ENCC_FRONTENDS_PROTOWIRE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstring>

namespace encc {

/// A protobuf message: fields in order, each handed to a callback.
class ProtoWire {
public:
  explicit ProtoWire(llvm::StringRef bytes) : p_(bytes.bytes_begin()), end_(bytes.bytes_end()) {}

  /// Calls f(field, wireType, varint, bytes) for each field (`bytes` holds
  /// the payload of wire types 1, 2 and 5); false on a malformed message (an
  /// overrun, a group, an unknown wire type) or when f returns false.
  template <typename F> bool each(F f) {
    while (p_ < end_) {
      uint64_t key;
      if (!varint(key))
        return false;
      const uint32_t field = uint32_t(key >> 3), type = uint32_t(key & 7);
      uint64_t value = 0;
      llvm::StringRef bytes;
      switch (type) {
      case 0:
        if (!varint(value))
          return false;
        break;
      case 1:
      case 5: {
        const size_t n = type == 1 ? 8 : 4;
        if (size_t(end_ - p_) < n)
          return false;
        bytes = llvm::StringRef(reinterpret_cast<const char *>(p_), n);
        p_ += n;
        break;
      }
      case 2:
        if (!varint(value) || value > uint64_t(end_ - p_))
          return false;
        bytes = llvm::StringRef(reinterpret_cast<const char *>(p_), size_t(value));
        p_ += value;
        break;
      default:
        return false;
      }
      if (!f(field, type, value, bytes))
        return false;
    }
    return true;
  }

  /// The varints of a packed repeated field's payload, each handed to f;
  /// false on a malformed payload.
  template <typename F> static bool eachPackedVarint(llvm::StringRef payload, F f) {
    ProtoWire w(payload);
    while (w.p_ < w.end_) {
      uint64_t v;
      if (!w.varint(v))
        return false;
      f(v);
    }
    return true;
  }

  static float fixed32Float(llvm::StringRef b) {
    float f;
    std::memcpy(&f, b.data(), 4);
    return f;
  }

private:
  bool varint(uint64_t &out) {
    out = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const uint8_t b = *p_++;
      out |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80))
        return true;
    }
    return false;
  }

  const uint8_t *p_, *end_;
};

} // namespace encc

#endif // ENCC_FRONTENDS_PROTOWIRE_H
