//===- JsonOutput.h - JSON documents the encc commands print --------------===//
//
// The compiler reads config.json, tokenizer.json and safetensors headers with
// nlohmann/json; its commands write their `--format json` documents with it
// too (one JSON library in the compiler). Keys keep their insertion order.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_JSONOUTPUT_H
#define ENCC_COMPILER_JSONOUTPUT_H

#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace encc {

using Json = nlohmann::ordered_json;

/// `j` as text: compact when `indent` < 0, else pretty with that many spaces.
/// Invalid UTF-8 in strings becomes U+FFFD; a NaN or infinity becomes null.
inline std::string jsonText(const Json &j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

/// The row-major `rows` x `cols` matrix at `data` as an array of arrays.
template <typename T> Json jsonMatrix(const T *data, int64_t rows, int64_t cols) {
  Json m = Json::array();
  for (int64_t r = 0; r < rows; ++r)
    m.push_back(std::vector<T>(data + r * cols, data + (r + 1) * cols));
  return m;
}

/// Prints `j` and a newline.
inline void printJson(llvm::raw_ostream &os, const Json &j, int indent = -1) { os << jsonText(j, indent) << "\n"; }

} // namespace encc

#endif // ENCC_COMPILER_JSONOUTPUT_H
