//===- TokenizerJsonReader.h - What tokenizer.json readers share ----------===//
//
// The `tokenizers` library's serialisation (tokenizers 0.23) as the BPE and
// Unigram readers see it: typed fields with errors that name them, the
// added_tokens list and the post-processor (RobertaProcessing /
// BertProcessing / TemplateProcessing / ByteLevel, or a Sequence of them) as
// one sequence's template of ids.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_FRONTENDS_HF_TOKENIZERJSONREADER_H
#define ENCC_FRONTENDS_HF_TOKENIZERJSONREADER_H

#include "frontends/ModelDescription.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace encc {

/// Fills `vocab` (by id) from a tokenizer.json model.vocab map token -> id;
/// ids must be 0..n-1, each once. Errors are prefixed with `path`.
llvm::Error vocabFromMap(const nlohmann::json &map, const std::string &path, std::vector<std::string> &vocab);

/// Byte length of the UTF-8 sequence `lead` starts (1 for anything else).
inline size_t utf8Length(unsigned char lead) { return lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1; }

/// Why the file cannot be tokenised by encrt (empty: it can).
struct Unsupported {
  std::string why;
  explicit operator bool() const { return !why.empty(); }
};

class TokenizerJsonReader {
protected:
  using json = nlohmann::json;
  TokenizerJsonReader(const json &j, const std::string &path, TokenizerData &tok) : j_(j), path_(path), tok_(tok) {}

  static const json *field(const json &obj, const char *key);
  /// obj["type"], or "" when it has none.
  static std::string typeOf(const json &obj);
  static std::string quotedType(const json &obj);
  llvm::Error bad(const llvm::Twine &what) const;
  /// obj[key] into `out` when present and not null; `where` prefixes the key
  /// in the error ("model.").
  llvm::Error readBool(const json &obj, const char *key, const char *where, bool &out) const;
  /// A Metaspace's (pre-tokenizer or decoder) prepend_scheme into `out`:
  /// "always", "first" or "never"; absent or null: always, unless the older
  /// add_prefix_space is false (never; with a prepend_scheme other than
  /// "never" the library refuses it, and so does this). `where` names the
  /// object in errors ("pre_tokenizer").
  llvm::Error readPrependScheme(const json &m, const std::string &where, TokenizerData::Prepend &out) const;
  /// A Metaspace pre-tokenizer `m` into tok_'s metaspace fields: its
  /// replacement (one character), prepend_scheme and split.
  llvm::Error readMetaspace(const json &m);

  /// Calls `readStep(step, where)` for each step of the normalizer `n`: the
  /// normalizers of a Sequence (nested ones flattened) in order, else `n`
  /// itself; stops at the first error or unsupported step.
  template <typename ReadStep>
  llvm::Error forEachNormalizer(const json &n, const std::string &where, Unsupported &unsupported,
                                ReadStep &&readStep) {
    if (typeOf(n) != "Sequence")
      return readStep(n, where);
    const json *list = field(n, "normalizers");
    if (!list || !list->is_array())
      return bad("field '" + where + ".normalizers' must be an array");
    for (size_t i = 0; i < list->size(); ++i)
      if (auto e = forEachNormalizer((*list)[i], where + ".normalizers[" + std::to_string(i) + "]", unsupported,
                                     readStep);
          e || unsupported)
        return e;
    return llvm::Error::success();
  }

  /// added_tokens into tok_.addedTokens (single_word is not supported).
  llvm::Error readAddedTokens(Unsupported &unsupported);
  /// post_processor into tok_.templateIds (null: the text alone).
  llvm::Error readPostProcessor(Unsupported &unsupported);
  /// decoder into tok_.decoders (a Sequence flattened; a kind encrt does
  /// not implement as an Unsupported step, which only decoding refuses).
  llvm::Error readDecoder();

  const json &j_;
  const std::string &path_;
  TokenizerData &tok_;

private:
  llvm::Error pairId(const json &post, const char *key, int32_t &out) const;
  llvm::Error templateOf(const json &post, Unsupported &unsupported);
  llvm::Error readOffsetTrim(const json &post, const std::string &where);
  llvm::Error readDecoderStep(const json &d, const std::string &where);
  llvm::Error templatePieces(const json &pieces, const json &specials, const char *which, std::vector<int32_t> &ids,
                             std::vector<int32_t> &types) const;
};

/// Runs `R(j, path, data).read(unsupported)` into fresh data of `kind`: the
/// result replaces `tok`, or, when the file asks for what encrt does not
/// implement, tok.vocab is emptied and tok.note says why (`what` names the
/// tokenizer in it).
template <typename R>
llvm::Error readTokenizerJson(const nlohmann::json &j, const std::string &path, TokenizerData &tok, TokenizerKind kind,
                              const char *what) {
  TokenizerData data;
  data.kind = kind;
  Unsupported unsupported;
  if (auto e = R(j, path, data).read(unsupported))
    return e;
  if (unsupported) {
    tok.vocab.clear();
    tok.note = path + ": " + unsupported.why + " is not implemented by encc's " + what +
               " tokenizer; the model runs on token ids only";
    return llvm::Error::success();
  }
  data.note.clear();
  tok = std::move(data);
  return llvm::Error::success();
}

/// The decoded bytes of standard base64 `text` (padding optional); false on
/// any other character.
bool decodeBase64(const std::string &text, std::string &out);

} // namespace encc

#endif // ENCC_FRONTENDS_HF_TOKENIZERJSONREADER_H
