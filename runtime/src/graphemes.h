//===- graphemes.h - extended grapheme clusters (UAX #29) -----------------===//
//
// Segmentation into extended grapheme clusters as the Rust crate
// unicode-segmentation does it (`text.graphemes(true)`), which the `tokenizers`
// library's Precompiled normalizer iterates over. All rules GB3..GB999 of
// UAX #29, with the Unicode data of unicode_grapheme_tables.cpp (its header
// names the Unicode version; unicode_grapheme_gen.py makes it).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_GRAPHEMES_H
#define ENCRT_GRAPHEMES_H

#include <cstddef>
#include <string_view>

namespace encrt::unicode {

/// The byte position where the extended grapheme cluster starting at `pos`
/// ends (> pos, <= s.size()). `s` is valid UTF-8 (an invalid byte is a
/// cluster of its own) and pos < s.size() a code point boundary.
///
/// The cluster is found by a state machine running forward from `pos`, never
/// looking back: this is the segmentation of the whole string only when `pos`
/// is a cluster boundary of it, i.e. 0 or the end of the previous cluster.
/// (Every context that a rule looks back on, the RI pair of GB12/13, the
/// ExtPict Extend* ZWJ of GB11 and the Consonant [Extend Linker]* Linker of
/// GB9c, lies inside the cluster: none of them can have a boundary inside
/// it, and RI runs before a boundary are of even length.) Iterate as
///   for (size_t p = 0; p < s.size(); p = graphemeEnd(s, p)) ...
/// No allocation; ASCII followed by ASCII takes a fast path.
size_t graphemeEnd(std::string_view s, size_t pos);

} // namespace encrt::unicode

#endif // ENCRT_GRAPHEMES_H
