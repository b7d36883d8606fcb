//===- UnigramTokenizerJson.cpp - tokenizer.json (Unigram) -> TokenizerData ===//
//
// The fields of the `tokenizers` library's serialisation (tokenizers 0.23)
// that decide a Unigram tokenizer's ids: model (vocab as [piece, score]
// pairs, unk_id, byte_fallback), normalizer, pre_tokenizer (Metaspace's
// replacement, prepend_scheme or the older add_prefix_space, split),
// post_processor, added_tokens. Replace patterns are a string or one of the
// regexes the converters write: a literal, one character repeated (" {2,}",
// "x+"), or the trimming of spaces ("\A +| +\z", read as a Strip).
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/UnigramTokenizerJson.h"

#include "frontends/hf/HFUtil.h"
#include "frontends/hf/TokenizerJsonReader.h"

#include <cmath>

using namespace encc;
using llvm::Twine;
using nlohmann::json;

namespace {

/// A Replace regex as (literal, minRepeat): "abc" -> ("abc", 0), "x{2,}" ->
/// ("x", 2), "x+" -> ("x", 1), an escaped metacharacter as itself; false for
/// anything else.
bool simpleRegex(const std::string &re, std::string &literal, int32_t &minRepeat) {
  static const std::string meta = ".^$*+?()[]{}|\\";
  literal.clear();
  minRepeat = 0;
  size_t i = 0;
  std::string lastChar;
  while (i < re.size()) {
    const char c = re[i];
    if (c == '\\' && i + 1 < re.size() && meta.find(re[i + 1]) != std::string::npos) {
      lastChar = re.substr(i + 1, 1);
      literal += lastChar;
      i += 2;
      continue;
    }
    if (meta.find(c) == std::string::npos) {
      lastChar = re.substr(i, utf8Length(static_cast<unsigned char>(c)));
      literal += lastChar;
      i += lastChar.size();
      continue;
    }
    // A quantifier, allowed only at the end, on a pattern of one character.
    if (literal != lastChar || literal.empty())
      return false;
    const std::string rest = re.substr(i);
    if (rest == "+") {
      minRepeat = 1;
      return true;
    }
    if (rest.size() >= 4 && rest.front() == '{' && rest.substr(rest.size() - 2) == ",}") {
      const std::string digits = rest.substr(1, rest.size() - 3);
      if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos)
        return false;
      minRepeat = std::stoi(digits);
      return minRepeat >= 1;
    }
    return false;
  }
  return !literal.empty();
}

/// The regex with which transformers' SentencePiece converters trim spaces.
const std::string kTrimSpaces = "\\A +| +\\z";

class Reader : TokenizerJsonReader {
public:
  Reader(const json &j, const std::string &path, TokenizerData &tok) : TokenizerJsonReader(j, path, tok) {}

  llvm::Error read(Unsupported &unsupported) {
    const json &model = j_.at("model");
    if (auto e = readModel(model, unsupported); e || unsupported)
      return e;
    if (auto e = readAddedTokens(unsupported); e || unsupported)
      return e;
    if (const json *n = field(j_, "normalizer"); n && !n->is_null())
      if (auto e = forEachNormalizer(*n, "normalizer", unsupported,
                                     [&](const json &step, const std::string &where) {
                                       return readNormalizer(step, where, unsupported);
                                     });
          e || unsupported)
        return e;
    if (auto e = readPreTokenizer(unsupported); e || unsupported)
      return e;
    if (auto e = readPostProcessor(unsupported); e || unsupported)
      return e;
    return readDecoder();
  }

private:
  llvm::Error readModel(const json &model, Unsupported &unsupported) {
    const json *vocab = field(model, "vocab");
    if (!vocab || !vocab->is_array() || vocab->empty())
      return bad("field 'model.vocab' must be a non-empty array of [piece, score]");
    tok_.vocab.reserve(vocab->size());
    tok_.scores.reserve(vocab->size());
    for (size_t i = 0; i < vocab->size(); ++i) {
      const json &entry = (*vocab)[i];
      if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number() ||
          !std::isfinite(entry[1].get<double>()))
        return bad("model.vocab[" + Twine(i) + "] must be [piece, finite score]");
      tok_.vocab.push_back(entry[0].get<std::string>());
      tok_.scores.push_back(entry[1].get<double>());
    }
    if (auto e = readBool(model, "byte_fallback", "model.", tok_.byteFallback))
      return e;
    const json *unk = field(model, "unk_id");
    if (!unk || unk->is_null())
      return unsupported.why = "a Unigram model without unk_id", llvm::Error::success();
    if (!unk->is_number_integer() || unk->get<int64_t>() < 0 || unk->get<int64_t>() >= int64_t(tok_.vocab.size()))
      return bad("field 'model.unk_id' must be an index into model.vocab (0.." + Twine(tok_.vocab.size() - 1) + ")");
    tok_.unkId = static_cast<int32_t>(unk->get<int64_t>());
    return llvm::Error::success();
  }

  /// One normalizer step (forEachNormalizer flattens Sequences).
  llvm::Error readNormalizer(const json &n, const std::string &where, Unsupported &unsupported) {
    const std::string type = typeOf(n);
    NormalizerStepData step;
    if (type == "Precompiled") {
      step.kind = NormalizerStepData::Kind::Precompiled;
      const json *map = field(n, "precompiled_charsmap");
      if (!map || map->is_null())
        return llvm::Error::success(); // none: the library's identity
      if (!map->is_string() || !decodeBase64(map->get<std::string>(), step.charsmap))
        return bad("field '" + where + ".precompiled_charsmap' must be base64 text");
      if (step.charsmap.empty())
        return llvm::Error::success();
      const auto *b = reinterpret_cast<const unsigned char *>(step.charsmap.data());
      const uint64_t trie = step.charsmap.size() < 4 ? 0 : uint64_t(b[0]) | uint64_t(b[1]) << 8 |
                                                              uint64_t(b[2]) << 16 | uint64_t(b[3]) << 24;
      if (trie == 0 || trie % 4 != 0 || trie > step.charsmap.size() - 4)
        return bad("field '" + where + ".precompiled_charsmap' is not a SentencePiece charsmap (trie size " +
                   Twine(trie) + " of " + Twine(step.charsmap.size()) + " bytes)");
    } else if (type == "Replace") {
      step.kind = NormalizerStepData::Kind::Replace;
      const json *pattern = field(n, "pattern"), *content = field(n, "content");
      if (!pattern || !pattern->is_object() || !content || !content->is_string())
        return bad("'" + where + "' (Replace) needs 'pattern' {\"String\" | \"Regex\": ...} and 'content'");
      step.content = content->get<std::string>();
      if (const json *s = field(*pattern, "String"); s && s->is_string()) {
        step.pattern = s->get<std::string>();
        if (step.pattern.empty())
          return unsupported.why = where + " (Replace) with an empty pattern", llvm::Error::success();
      } else if (const json *r = field(*pattern, "Regex"); r && r->is_string() && r->get<std::string>() == kTrimSpaces &&
                                                           step.content.empty()) {
        // transformers' converters trim spaces (only U+0020) this way.
        step = NormalizerStepData();
        step.kind = NormalizerStepData::Kind::Strip;
        step.stripLeft = step.stripRight = step.stripSpacesOnly = true;
      } else if (const json *r = field(*pattern, "Regex"); r && r->is_string()) {
        if (!simpleRegex(r->get<std::string>(), step.pattern, step.minRepeat))
          return unsupported.why = where + " (Replace) regex '" + r->get<std::string>() + "'",
                 llvm::Error::success();
      } else {
        return bad("field '" + where + ".pattern' must be {\"String\": text} or {\"Regex\": text}");
      }
    } else if (type == "Strip") {
      step.kind = NormalizerStepData::Kind::Strip;
      if (auto e = readBool(n, "strip_left", (where + ".").c_str(), step.stripLeft))
        return e;
      if (auto e = readBool(n, "strip_right", (where + ".").c_str(), step.stripRight))
        return e;
    } else {
      return unsupported.why = where + " " + quotedType(n), llvm::Error::success();
    }
    tok_.normalizers.push_back(std::move(step));
    return llvm::Error::success();
  }

  /// Metaspace, alone or as the last of a Sequence [WhitespaceSplit, Metaspace].
  llvm::Error readPreTokenizer(Unsupported &unsupported) {
    const json *pre = field(j_, "pre_tokenizer");
    std::vector<const json *> list;
    if (pre && pre->is_object() && typeOf(*pre) == "Sequence") {
      const json *items = field(*pre, "pretokenizers");
      if (!items || !items->is_array())
        return bad("field 'pre_tokenizer.pretokenizers' must be an array");
      for (const json &p : *items)
        list.push_back(&p);
    } else if (pre && !pre->is_null()) {
      list.push_back(pre);
    }
    const bool split = list.size() == 2 && typeOf(*list[0]) == "WhitespaceSplit";
    if (list.empty() || list.size() > 2 || (list.size() == 2 && !split) || typeOf(*list.back()) != "Metaspace") {
      std::string what = list.empty() ? "missing" : "";
      for (const json *p : list)
        what += (what.empty() ? "" : ", ") + quotedType(*p);
      return unsupported.why = "pre_tokenizer " + what + " (Metaspace, optionally after WhitespaceSplit, is "
                                                         "implemented)",
             llvm::Error::success();
    }
    tok_.whitespaceSplit = split;
    return readMetaspace(*list.back());
  }
};

} // namespace

llvm::Error encc::readUnigram(const json &j, const std::string &path, TokenizerData &tok) {
  return readTokenizerJson<Reader>(j, path, tok, TokenizerKind::Unigram, "Unigram");
}
