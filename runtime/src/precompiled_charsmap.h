//===- precompiled_charsmap.h - SentencePiece's precompiled normaliser ----===//
//
// The normalisation rules a SentencePiece model carries (nmt_nfkc and the
// like) as a "precompiled charsmap": a darts-clone double-array trie from
// UTF-8 sequences to offsets into a blob of NUL-terminated replacement
// strings. Applied as the `tokenizers` library's Precompiled normaliser does
// (normalizers/precompiled.rs, spm_precompiled 0.1): per extended grapheme
// cluster, the whole cluster (when shorter than 6 bytes) is replaced by the
// entry of its *shortest* matching prefix, else each code point by its own
// entry, else kept. Every trie access is bounds-checked: a damaged map can
// only fail to match, never read outside its bytes.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_PRECOMPILED_CHARSMAP_H
#define ENCRT_PRECOMPILED_CHARSMAP_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace encrt {

class PrecompiledCharsmap {
public:
  /// Parses the serialised map: a little-endian uint32 trie size in bytes (a
  /// multiple of 4), the trie's units, then the replacement strings (valid
  /// UTF-8). Throws std::invalid_argument on a map that is not of that form.
  explicit PrecompiledCharsmap(std::string_view bytes);

  /// One step of the rewrite: `oldChars` code points became `newBytes`
  /// bytes of the output (unchanged code points are parts of their own).
  struct Part {
    uint32_t oldChars, newBytes;
  };

  /// Appends the normalised form of `text` (valid UTF-8) to `out`; with
  /// `parts`, also what became of each piece of `text`, in order.
  void normalize(std::string_view text, std::string &out, std::vector<Part> *parts = nullptr) const;

  /// The replacement of the shortest prefix of `chunk` that has one, as the
  /// library's transform(); false when none does.
  bool transform(std::string_view chunk, std::string_view &replacement) const;

private:
  std::vector<uint32_t> units_;
  std::string replacements_;
};

} // namespace encrt

#endif // ENCRT_PRECOMPILED_CHARSMAP_H
