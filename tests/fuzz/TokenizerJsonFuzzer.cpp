//===- TokenizerJsonFuzzer.cpp - libFuzzer target: tokenizer.json readers -===//
//
// The compiler's readers of a byte-level BPE or Unigram tokenizer.json
// (frontends/hf/BpeTokenizerJson.cpp, UnigramTokenizerJson.cpp; model.type
// picks one), of a WordPiece tokenizer.json's added tokens and pair template
// (WordPieceTokenizerJson.cpp, over a fixed vocabulary), and the XLM-R
// SentencePiece model reader
// (SentencePieceModel.cpp) on input that is not JSON; then the runtime
// tokenizer built from what they accept. Any input must give a clean error, "not supported" (an empty
// vocabulary and a note), or tokenizer data the runtime accepts: the reader
// and the runtime's checks must agree (a file the compiler writes into an
// artifact must load). The accepted tokenizer then encodes a few texts; every
// id must be one it can produce and the result <s> ... </s>-shaped within the
// maximum.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/BpeTokenizerJson.h"
#include "frontends/hf/SentencePieceModel.h"
#include "frontends/hf/UnigramTokenizerJson.h"
#include "frontends/hf/WordPieceTokenizerJson.h"

#include "bpe_tokenizer.h"
#include "tokenizer.h"
#include "unigram_tokenizer.h"

#include <memory>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace {

[[noreturn]] void violated(const std::string &what) {
  std::fprintf(stderr, "tokenizer.json invariant violated: %s\n", what.c_str());
  std::abort();
}

} // namespace

/// Encodes a few texts; every id must be one `tok` can produce, within the maximum.
template <typename T> void checkEncodes(const T &tok, int32_t specials) {
  for (const char *text : {"", "hello world", " <s> a\tb  c 12'll ", "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80 x",
                           "\xef\xbc\xa1\xcc\x81 \xe2\x96\x81x  y "}) {
    for (int32_t maxLen : {specials, specials + 3, 512}) {
      std::vector<int32_t> ids = tok.encode(text, maxLen);
      if (static_cast<int32_t>(ids.size()) > std::max(maxLen, specials))
        violated("more ids than the maximum");
      for (int32_t id : ids)
        if (id < 0 || id > tok.maxId())
          violated("id " + std::to_string(id) + " outside [0, " + std::to_string(tok.maxId()) + "]");
    }
  }
}

static std::vector<encrt::AddedToken> runtimeAddedTokens(const encc::TokenizerData &tok) {
  std::vector<encrt::AddedToken> added;
  for (const encc::AddedTokenData &a : tok.addedTokens)
    added.push_back({a.content, a.id, a.special, a.lstrip, a.rstrip, a.normalized});
  return added;
}

/// A WordPiece tokenizer.json: its added tokens and pair template read beside
/// a fixed vocabulary, then the runtime's WordPieceTokenizer built from what
/// the reader accepted, as an artifact's loader builds it.
static void fuzzWordPieceSpecials(const nlohmann::json &j) {
  static const std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>",  "</s>",
                                                 "<unk>", "<mask>", "hello", "world", "##s",   "a",     "b"};
  encc::TokenizerData tok;
  tok.vocab = vocab;
  tok.padId = 0, tok.unkId = 1, tok.clsId = 2, tok.sepId = 3;
  std::string note;
  if (llvm::Error e = encc::readWordPieceSpecials(j, "fuzz/tokenizer.json", tok, note)) {
    llvm::consumeError(std::move(e));
    return;
  }
  encrt::WordPieceOptions o;
  o.padId = tok.padId, o.unkId = tok.unkId, o.clsId = tok.clsId, o.sepId = tok.sepId;
  encrt::WordPieceSpecials specials{runtimeAddedTokens(tok), {tok.pairTemplateIds, tok.pairTypeIds}};
  try {
    checkEncodes(encrt::WordPieceTokenizer(vocab, o, specials), 2);
  } catch (const std::invalid_argument &e) {
    violated(std::string("the WordPiece reader accepted what the runtime refuses: ") + e.what());
  }
}

/// model.type when it is a string, else "".
static std::string modelType(const nlohmann::json &j) {
  const nlohmann::json &m = j["model"];
  return m.contains("type") && m["type"].is_string() ? m["type"].get<std::string>() : std::string();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  // Not JSON: a SentencePiece model (sentencepiece.bpe.model) then; JSON:
  // readTokenizer's preconditions, an object whose model is an object.
  if (!j.is_discarded() && (!j.is_object() || !j.contains("model") || !j["model"].is_object()))
    return 0;
  if (!j.is_discarded() && modelType(j) == "WordPiece") {
    fuzzWordPieceSpecials(j);
    return 0;
  }
  const bool unigram = j.is_discarded() || modelType(j) == "Unigram";
  encc::TokenizerData tok;
  llvm::Error e = j.is_discarded()
                      ? encc::xlmRobertaSentencePiece(llvm::StringRef(reinterpret_cast<const char *>(data), size),
                                                      "fuzz/sentencepiece.bpe.model", tok)
                  : unigram ? encc::readUnigram(j, "fuzz/tokenizer.json", tok)
                            : encc::readByteLevelBpe(j, "fuzz/tokenizer.json", tok);
  if (e) {
    llvm::consumeError(std::move(e));
    return 0;
  }
  if (tok.vocab.empty()) {
    if (tok.note.empty())
      violated("an empty vocabulary without a note saying why");
    return 0;
  }
  const std::vector<encrt::AddedToken> added = runtimeAddedTokens(tok);
  std::vector<encrt::NormalizerStep> normalizers; // the kinds are listed in the same order on both sides
  for (const encc::NormalizerStepData &n : tok.normalizers)
    normalizers.push_back({static_cast<encrt::NormalizerStep::Kind>(n.kind), n.charsmap, n.pattern, n.minRepeat,
                           n.content, n.stripLeft, n.stripRight, n.stripSpacesOnly});
  const int32_t specials = static_cast<int32_t>(tok.templateIds.size()) - 1;
  try {
    if (unigram) {
      encrt::UnigramOptions o;
      o.unkId = tok.unkId;
      o.byteFallback = tok.byteFallback;
      o.normalizers = normalizers;
      o.whitespaceSplit = tok.whitespaceSplit;
      o.replacement = tok.metaspaceReplacement;
      o.prepend = static_cast<encrt::UnigramOptions::Prepend>(tok.metaspacePrepend);
      o.split = tok.metaspaceSplit;
      o.templateIds = tok.templateIds;
      checkEncodes(encrt::UnigramTokenizer(tok.vocab, tok.scores, added, o), specials);
    } else {
      encrt::BpeOptions o;
      // The kinds are listed in the same order on both sides.
      o.split = static_cast<encrt::BpeSplit>(tok.bpeSplit);
      o.alphabet = static_cast<encrt::BpeAlphabet>(tok.bpeAlphabet);
      o.byteFallback = tok.byteFallback;
      o.metaspace = {tok.metaspaceReplacement, static_cast<encrt::MetaspacePrepend>(tok.metaspacePrepend),
                     tok.metaspaceSplit};
      o.addPrefixSpace = tok.addPrefixSpace;
      o.ignoreMerges = tok.ignoreMerges;
      o.fuseUnk = tok.fuseUnk;
      o.unkId = tok.unkId;
      o.templateIds = tok.templateIds;
      o.normalizers = normalizers;
      checkEncodes(encrt::BytePairTokenizer(tok.vocab, tok.merges, added, o), specials);
    }
  } catch (const std::invalid_argument &e) {
    violated(std::string("the reader accepted what the runtime refuses: ") + e.what());
  }
  return 0;
}
