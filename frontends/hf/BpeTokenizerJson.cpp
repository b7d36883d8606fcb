//===- BpeTokenizerJson.cpp - tokenizer.json (BPE) -> TokenizerData -------===//
//
// The fields of the `tokenizers` library's serialisation (tokenizers 0.23)
// that decide ids: model (vocab, merges as "a b" strings or [a, b] pairs,
// unk_token, fuse_unk, ignore_merges, byte_fallback, and the options encrt
// does not implement: dropout, continuing_subword_prefix, end_of_word_suffix),
// normalizer (NFC, Replace of a string, Prepend), pre_tokenizer (ByteLevel,
// alone or after a Split on Qwen2's / cl100k's regex: byte-level BPE; none, or
// a Split on " " merged with the previous piece: SentencePiece BPE on
// characters, Llama 2 / Gemma), post_processor, added_tokens.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/BpeTokenizerJson.h"

#include "frontends/hf/HFUtil.h"
#include "frontends/hf/TokenizerJsonReader.h"

#include <unordered_map>

using namespace encc;
using llvm::Twine;
using nlohmann::json;

namespace {

class Reader : TokenizerJsonReader {
public:
  Reader(const json &j, const std::string &path, TokenizerData &tok) : TokenizerJsonReader(j, path, tok) {}

  llvm::Error read(Unsupported &unsupported) {
    const json &model = j_.at("model");
    if (auto e = readVocab(model))
      return e;
    if (auto e = readModelOptions(model, unsupported); e || unsupported)
      return e;
    if (auto e = readMerges(model))
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
  llvm::Error readVocab(const json &model) {
    const json *map = field(model, "vocab");
    if (!map || map->empty())
      return bad("field 'model.vocab' must be a non-empty object mapping tokens to ids");
    if (auto e = vocabFromMap(*map, path_, tok_.vocab))
      return e;
    for (size_t i = 0; i < tok_.vocab.size(); ++i)
      ids_[tok_.vocab[i]] = static_cast<int32_t>(i);
    return llvm::Error::success();
  }

  llvm::Error readModelOptions(const json &model, Unsupported &unsupported) {
    if (const json *d = field(model, "dropout"); d && !d->is_null() && !(d->is_number() && d->get<double>() == 0))
      return unsupported.why = "BPE dropout", llvm::Error::success();
    for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (const json *v = field(model, key); v && !v->is_null() && !(v->is_string() && v->get<std::string>().empty()))
        return unsupported.why = std::string("BPE ") + key, llvm::Error::success();
    if (auto e = readBool(model, "byte_fallback", "model.", tok_.byteFallback)) // checked with the pre-tokenizer
      return e;
    if (auto e = readBool(model, "fuse_unk", "model.", tok_.fuseUnk))
      return e;
    if (auto e = readBool(model, "ignore_merges", "model.", tok_.ignoreMerges))
      return e;
    tok_.unkId = -1;
    if (const json *unk = field(model, "unk_token"); unk && !unk->is_null()) {
      if (!unk->is_string())
        return bad("field 'model.unk_token' must be a string or null");
      auto it = ids_.find(unk->get<std::string>());
      if (it == ids_.end())
        return bad("model.unk_token '" + unk->get<std::string>() + "' is not in the vocabulary");
      tok_.unkId = it->second;
    }
    return llvm::Error::success();
  }

  llvm::Error readMerges(const json &model) {
    const json *merges = field(model, "merges");
    if (!merges || !merges->is_array())
      return bad("field 'model.merges' must be an array");
    tok_.merges.reserve(merges->size());
    for (size_t r = 0; r < merges->size(); ++r) {
      const json &m = (*merges)[r];
      std::string a, b;
      if (m.is_string()) { // "a b"
        const std::string s = m.get<std::string>();
        size_t space = s.find(' ');
        if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
          return bad("model.merges[" + Twine(r) + "] '" + s + "' is not two tokens separated by one space");
        a = s.substr(0, space), b = s.substr(space + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        a = m[0].get<std::string>(), b = m[1].get<std::string>();
      } else {
        return bad("model.merges[" + Twine(r) + "] must be \"a b\" or [a, b]");
      }
      auto ia = ids_.find(a), ib = ids_.find(b), iab = ids_.find(a + b);
      if (ia == ids_.end() || ib == ids_.end() || iab == ids_.end())
        return bad("model.merges[" + Twine(r) + "] ('" + a + "', '" + b + "'): '" +
                   (ia == ids_.end() ? a : ib == ids_.end() ? b : a + b) + "' is not in the vocabulary");
      tok_.merges.emplace_back(ia->second, ib->second);
    }
    return llvm::Error::success();
  }

  /// One normalizer step (forEachNormalizer flattens Sequences): NFC
  /// (GPT-NeoX's, ModernBERT's), Replace of a string and Prepend
  /// (SentencePiece BPE: " " -> "▁", "▁" first); any other leaves the model
  /// without a tokenizer (a note says which).
  llvm::Error readNormalizer(const json &n, const std::string &where, Unsupported &unsupported) {
    if (!n.is_object())
      return bad("field '" + where + "' must be an object or null");
    NormalizerStepData step;
    const std::string type = typeOf(n);
    if (type == "NFC") {
      step.kind = NormalizerStepData::Kind::Nfc;
    } else if (type == "Replace") {
      const json *pattern = field(n, "pattern"), *content = field(n, "content");
      const json *literal = pattern && pattern->is_object() ? field(*pattern, "String") : nullptr;
      if (!literal || !literal->is_string() || !content || !content->is_string())
        return unsupported.why = where + " (Replace) of anything but a string", llvm::Error::success();
      step.kind = NormalizerStepData::Kind::Replace;
      step.pattern = literal->get<std::string>();
      step.content = content->get<std::string>();
      if (step.pattern.empty())
        return unsupported.why = where + " (Replace) with an empty pattern", llvm::Error::success();
    } else if (type == "Prepend") {
      const json *prepend = field(n, "prepend");
      if (!prepend || !prepend->is_string() || prepend->get<std::string>().empty())
        return bad("field '" + where + ".prepend' must be a non-empty string");
      step.kind = NormalizerStepData::Kind::Prepend;
      step.content = prepend->get<std::string>();
    } else {
      return unsupported.why = where + " " + quotedType(n), llvm::Error::success();
    }
    tok_.normalizers.push_back(std::move(step));
    return llvm::Error::success();
  }

  /// ByteLevel with its regex, alone or inside a Sequence of one (GPT-2,
  /// RoBERTa, GPT-NeoX); or a Sequence of a Split on Qwen2's or cl100k's
  /// regex and a ByteLevel without its regex or prefix space (Qwen2 / Qwen3,
  /// Llama 3).
  llvm::Error readPreTokenizer(Unsupported &unsupported) {
    const json *pre = field(j_, "pre_tokenizer");
    // SentencePiece BPE: the model sees characters (no ByteLevel mapping).
    // transformers' non-legacy Llama / Mistral converters: Metaspace as the
    // pre-tokenizer (no normalizer), prepend_scheme first, split false.
    if (pre && pre->is_object() && typeOf(*pre) == "Metaspace") {
      tok_.bpeAlphabet = TokenizerData::BpeAlphabet::Chars;
      tok_.bpeSplit = TokenizerData::BpeSplit::Metaspace;
      return readMetaspace(*pre);
    }
    if (!pre || pre->is_null() || (pre->is_object() && typeOf(*pre) == "Split" && isSplitAfterSpaces(*pre))) {
      tok_.bpeAlphabet = TokenizerData::BpeAlphabet::Chars;
      tok_.bpeSplit = !pre || pre->is_null() ? TokenizerData::BpeSplit::Whole
                                             : TokenizerData::BpeSplit::SpaceMergedWithPrevious;
      return llvm::Error::success();
    }
    const json *split = nullptr;
    if (pre && pre->is_object() && typeOf(*pre) == "Sequence") {
      const json *list = field(*pre, "pretokenizers");
      const size_t n = list && list->is_array() ? list->size() : 0;
      if (n == 2 && (*list)[0].is_object() && typeOf((*list)[0]) == "Split")
        split = &(*list)[0];
      pre = n == 1 || split ? &(*list)[n - 1] : nullptr;
    }
    if (!pre || !pre->is_object() || typeOf(*pre) != "ByteLevel")
      return unsupported.why = "pre_tokenizer " + (pre ? quotedType(*pre) : std::string("missing")) +
                               " (implemented: ByteLevel, and a Split on Qwen2's or cl100k's regex before it; none, "
                               "Metaspace or a Split on \" \" merged with the previous piece for SentencePiece BPE)",
             llvm::Error::success();
    if (tok_.byteFallback)
      return unsupported.why = "BPE byte_fallback with a ByteLevel pre_tokenizer", llvm::Error::success();
    bool useRegex = true;
    if (auto e = readBool(*pre, "use_regex", "pre_tokenizer.", useRegex))
      return e;
    if (auto e = readBool(*pre, "add_prefix_space", "pre_tokenizer.", tok_.addPrefixSpace))
      return e;
    if (!split)
      return useRegex ? llvm::Error::success()
                      : (unsupported.why = "ByteLevel pre_tokenizer without use_regex", llvm::Error::success());
    if (useRegex || tok_.addPrefixSpace)
      return unsupported.why = "a Split pre_tokenizer before a ByteLevel one with use_regex or add_prefix_space",
             llvm::Error::success();
    return readSplit(*split, unsupported);
  }

  /// Split {pattern: {Regex: P}, behavior: Isolated, invert: false} with P
  /// Qwen2's or cl100k's regex (bpe_tokenizer.h, BpeSplit).
  llvm::Error readSplit(const json &split, Unsupported &unsupported) {
    static const char *const kQwen2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                                      "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    static const char *const kCl100k = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                                       "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    const json *pattern = field(split, "pattern");
    const json *regex = pattern && pattern->is_object() ? field(*pattern, "Regex") : nullptr;
    const json *behavior = field(split, "behavior");
    bool invert = false;
    if (auto e = readBool(split, "invert", "pre_tokenizer.pretokenizers[0].", invert))
      return e;
    if (!behavior || !behavior->is_string() || behavior->get<std::string>() != "Isolated" || invert)
      return unsupported.why = "a Split pre_tokenizer other than Isolated and not inverted", llvm::Error::success();
    const std::string p = regex && regex->is_string() ? regex->get<std::string>() : std::string();
    if (p == kQwen2)
      tok_.bpeSplit = TokenizerData::BpeSplit::Qwen2;
    else if (p == kCl100k)
      tok_.bpeSplit = TokenizerData::BpeSplit::Cl100k;
    else
      return unsupported.why = "a Split pre_tokenizer on " +
                               (regex ? "the regex '" + p + "'" : std::string("a string pattern")) +
                               " (implemented: Qwen2's and cl100k's regex)",
             llvm::Error::success();
    return llvm::Error::success();
  }

  /// Gemma's Split {pattern: {String: " "}, behavior: MergedWithPrevious, invert: false}.
  static bool isSplitAfterSpaces(const json &split) {
    const json *pattern = field(split, "pattern");
    const json *literal = pattern && pattern->is_object() ? field(*pattern, "String") : nullptr;
    const json *behavior = field(split, "behavior"), *invert = field(split, "invert");
    return literal && literal->is_string() && literal->get<std::string>() == " " && behavior &&
           behavior->is_string() && behavior->get<std::string>() == "MergedWithPrevious" &&
           (!invert || (invert->is_boolean() && !invert->get<bool>()));
  }

  std::unordered_map<std::string, int32_t> ids_;
};

} // namespace

llvm::Error encc::readByteLevelBpe(const json &j, const std::string &path, TokenizerData &tok) {
  return readTokenizerJson<Reader>(j, path, tok, TokenizerKind::ByteLevelBPE, "BPE");
}
