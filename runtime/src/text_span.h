//===- text_span.h - Byte ranges of a text (offsets, alignments) ----------===//
//
// The `tokenizers` library tracks, for each byte of a normalised text, the
// bytes of the original character it came from (NormalizedString's
// alignments), and gives each token the original bytes it covers (its
// offsets). encrt keeps both as TextSpans over the text as given.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_TEXT_SPAN_H
#define ENCRT_TEXT_SPAN_H

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace encrt {

/// Bytes [start, end) of a text.
struct TextSpan {
  uint32_t start = 0, end = 0;
};

/// The original span of the normalised bytes [from, to) by their
/// alignments (the library's convert_offsets: the first byte's start, the
/// last one's end); (0, 0) for an empty range.
inline TextSpan spanOf(const std::vector<TextSpan> &alignments, size_t from, size_t to) {
  return from < to ? TextSpan{alignments[from].start, alignments[to - 1].end} : TextSpan{};
}

/// The alignments of a text that nothing has changed yet: each byte of
/// `text` (valid UTF-8) gets its character's bytes, into `out` (replaced).
void characterAlignments(std::string_view text, std::vector<TextSpan> &out);

} // namespace encrt

#endif // ENCRT_TEXT_SPAN_H
