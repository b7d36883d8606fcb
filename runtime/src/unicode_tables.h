//===- unicode_tables.h - generated Unicode tables (declarations) ---------===//
//
// Data defined in unicode_bert_tables.cpp and unicode_gpt2_tables.cpp, which
// unicode_bert_gen.py and unicode_gpt2_gen.py generate from the `tokenizers`
// library. Use through unicode.h, not directly.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_UNICODE_TABLES_H
#define ENCRT_UNICODE_TABLES_H

#include <cstddef>
#include <cstdint>

namespace encrt::unicode::detail {

/// unicode_bert_tables.cpp (unicode_bert_gen.py, from the `tokenizers`
/// library): sorted (start << 3) | BertClass for every code point, and what
/// strip-accents / lowercase make of a code point (kBertMapPool[start ..
/// start + count)), sorted by cp, for the code points they change.
struct BertMapping {
  uint32_t cp;
  uint16_t start;
  uint8_t count;
};
constexpr int kBertMapMaxLength = 3;
extern const char kBertTablesSource[];
extern const uint32_t kBertClassBreaks[];
extern const size_t kNumBertClassBreaks;
extern const char32_t kBertMapPool[];
extern const BertMapping kBertLower[], kBertStrip[], kBertStripLower[];
extern const size_t kNumBertLower, kNumBertStrip, kNumBertStripLower;

/// unicode_gpt2_tables.cpp (unicode_gpt2_gen.py, from the `tokenizers`
/// library): sorted (start << 2) | Gpt2Class for every code point.
extern const char kGpt2TablesSource[];
extern const uint32_t kGpt2ClassBreaks[];
extern const size_t kNumGpt2ClassBreaks;

} // namespace encrt::unicode::detail

#endif // ENCRT_UNICODE_TABLES_H
