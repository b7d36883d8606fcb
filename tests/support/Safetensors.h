//===- Safetensors.h - Minimal safetensors reader/writer for tests -*- C++ -*-===//
//
// Test-only safetensors I/O, independent of the product's reader: a writer for
// tiny synthetic models and a loader that widens every tensor to double.
// Also the IEEE half / bfloat16 round-to-nearest-even helpers used by both.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_SUPPORT_SAFETENSORS_H
#define ENCC_TESTS_SUPPORT_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace encc::testing {

/// Tensor name -> row-major values.
using WeightMap = std::map<std::string, std::vector<double>>;
/// Tensor name -> shape.
using ShapeMap = std::map<std::string, std::vector<int64_t>>;

/// A whole safetensors file widened to double.
struct SafetensorsF64 {
  WeightMap weights;
  ShapeMap shapes;
  std::map<std::string, std::string> dtypes; ///< "F32", "F16", "BF16", ...
  std::map<std::string, std::string> metadata;
};

/// Reads F64/F32/F16/BF16/I64/I32/I16/I8/U8/BOOL tensors into doubles.
/// Throws std::runtime_error with a one-line message naming the file and
/// tensor on any malformed header, offset or size.
SafetensorsF64 loadSafetensorsF64(const std::string &path);

/// Writes `weights` (shapes from `shapes`, all tensors in `dtype`: "F32",
/// "F16" or "BF16") as a safetensors file with "__metadata__":{"format":"pt"}.
/// Tensors are laid out in name order; the header is space-padded to 8 bytes.
/// Values are rounded to the dtype (round-to-nearest-even) on write.
void writeSafetensors(const std::string &path, const WeightMap &weights,
                      const ShapeMap &shapes, const std::string &dtype);

/// IEEE binary16 bits of `f`, round-to-nearest-even (overflow -> inf).
uint16_t floatToHalfBits(float f);
/// The float value of IEEE binary16 bits (subnormals, inf, NaN handled).
float halfBitsToFloat(uint16_t h);
/// bfloat16 bits of `f`, round-to-nearest-even.
uint16_t floatToBF16Bits(float f);
/// The float value of bfloat16 bits.
float bf16BitsToFloat(uint16_t h);

/// `x` as stored in `dtype` ("F32", "F16", "BF16", "F64"), widened back.
double roundToDtype(double x, const std::string &dtype);

} // namespace encc::testing

#endif // ENCC_TESTS_SUPPORT_SAFETENSORS_H
