//===- TokenizerJsonFuzzer.cpp - libFuzzer target: tokenizer.json readers -===//
//
// The compiler's readers of a byte-level BPE or Unigram tokenizer.json
// (frontends/hf/BpeTokenizerJson.cpp, UnigramTokenizerJson.cpp; model.type
// picks one), and the XLM-R SentencePiece model reader
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

#include "bpe_tokenizer.h"
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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  // Not JSON: a SentencePiece model (sentencepiece.bpe.model) then; JSON:
  // readTokenizer's preconditions, an object whose model is an object.
  if (!j.is_discarded() && (!j.is_object() || !j.contains("model") || !j["model"].is_object()))
    return 0;
  const bool unigram = j.is_discarded() || j["model"].value("type", "") == "Unigram";
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
  std::vector<encrt::AddedToken> added;
  for (const encc::AddedTokenData &a : tok.addedTokens)
    added.push_back({a.content, a.id, a.special, a.lstrip, a.rstrip, a.normalized});
  const int32_t specials = static_cast<int32_t>(tok.templateIds.size()) - 1;
  try {
    if (unigram) {
      encrt::UnigramOptions o;
      o.unkId = tok.unkId;
      o.byteFallback = tok.byteFallback;
      for (const encc::NormalizerStepData &n : tok.normalizers)
        o.normalizers.push_back({static_cast<encrt::NormalizerStep::Kind>(n.kind), n.charsmap, n.pattern,
                                 n.minRepeat, n.content, n.stripLeft, n.stripRight, n.stripSpacesOnly});
      o.whitespaceSplit = tok.whitespaceSplit;
      o.replacement = tok.metaspaceReplacement;
      o.prepend = static_cast<encrt::UnigramOptions::Prepend>(tok.metaspacePrepend);
      o.split = tok.metaspaceSplit;
      o.templateIds = tok.templateIds;
      checkEncodes(encrt::UnigramTokenizer(tok.vocab, tok.scores, added, o), specials);
    } else {
      encrt::BpeOptions o;
      o.addPrefixSpace = tok.addPrefixSpace;
      o.ignoreMerges = tok.ignoreMerges;
      o.fuseUnk = tok.fuseUnk;
      o.unkId = tok.unkId;
      o.templateIds = tok.templateIds;
      checkEncodes(encrt::BytePairTokenizer(tok.vocab, tok.merges, added, o), specials);
    }
  } catch (const std::invalid_argument &e) {
    violated(std::string("the reader accepted what the runtime refuses: ") + e.what());
  }
  return 0;
}
