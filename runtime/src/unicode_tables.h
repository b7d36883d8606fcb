//===- unicode_tables.h - generated Unicode tables (declarations) ---------===//
//
// Data defined in unicode_tables.cpp, which unicode_tables_gen.py generates
// from Python's unicodedata, and in unicode_gpt2_tables.cpp, which
// unicode_gpt2_gen.py generates from the `tokenizers` library. Use through
// unicode.h, not directly.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_UNICODE_TABLES_H
#define ENCRT_UNICODE_TABLES_H

#include <cstddef>
#include <cstdint>

namespace encrt::unicode::detail {

/// Code points lo, lo + stride, ... (count of them) lowercase to cp + delta.
struct LowerRun {
  uint32_t lo;
  uint16_t count;
  uint8_t stride;
  int32_t delta;
};

/// cp strips (NFD, Mn dropped) to the single code point `to`.
struct StripEntry {
  uint16_t cp;
  uint16_t to;
};

/// cp strips to up to three code points (zero-padded); for what
/// StripEntry cannot hold.
struct StripEntry3 {
  uint32_t cp;
  uint32_t to[3];
};

extern const char kUnicodeVersion[];
/// Sorted (start << 3) | CharClass for code points >= 0x80.
extern const uint32_t kClassBreaks[];
extern const size_t kNumClassBreaks;
extern const LowerRun kLowerRuns[];
extern const size_t kNumLowerRuns;
extern const StripEntry kStrip[];
extern const size_t kNumStrip;
extern const StripEntry3 kStrip3[];
extern const size_t kNumStrip3;

/// unicode_gpt2_tables.cpp (unicode_gpt2_gen.py, from the `tokenizers`
/// library): sorted (start << 2) | Gpt2Class for every code point.
extern const char kGpt2TablesSource[];
extern const uint32_t kGpt2ClassBreaks[];
extern const size_t kNumGpt2ClassBreaks;

} // namespace encrt::unicode::detail

#endif // ENCRT_UNICODE_TABLES_H
