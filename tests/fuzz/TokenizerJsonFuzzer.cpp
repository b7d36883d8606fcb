//===- TokenizerJsonFuzzer.cpp - libFuzzer target: BPE tokenizer.json -----===//
//
// The compiler's reader of a byte-level BPE tokenizer.json
// (frontends/hf/BpeTokenizerJson.cpp), and the runtime tokenizer built from
// what it accepts. Any input must give a clean error, "not supported" (an empty
// vocabulary and a note), or tokenizer data the runtime accepts: the reader
// and the runtime's checks must agree (a file the compiler writes into an
// artifact must load). The accepted tokenizer then encodes a few texts; every
// id must be one it can produce and the result <s> ... </s>-shaped within the
// maximum.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/BpeTokenizerJson.h"

#include "bpe_tokenizer.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace {

[[noreturn]] void violated(const std::string &what) {
  std::fprintf(stderr, "tokenizer.json invariant violated: %s\n", what.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  // readTokenizer's preconditions: an object whose model is an object of type BPE.
  if (j.is_discarded() || !j.is_object() || !j.contains("model") || !j["model"].is_object())
    return 0;
  encc::TokenizerData tok;
  if (llvm::Error e = encc::readByteLevelBpe(j, "fuzz/tokenizer.json", tok)) {
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
  encrt::BpeOptions o;
  o.addPrefixSpace = tok.addPrefixSpace;
  o.ignoreMerges = tok.ignoreMerges;
  o.fuseUnk = tok.fuseUnk;
  o.unkId = tok.unkId;
  o.templateIds = tok.templateIds;
  try {
    encrt::BytePairTokenizer bpe(tok.vocab, tok.merges, added, o);
    const int32_t specials = static_cast<int32_t>(o.templateIds.size()) - 1;
    for (const char *text : {"", "hello world", " <s> a\tb  c 12'll ", "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80 x"}) {
      for (int32_t maxLen : {specials, specials + 3, 512}) {
        std::vector<int32_t> ids = bpe.encode(text, maxLen);
        if (static_cast<int32_t>(ids.size()) > std::max(maxLen, specials))
          violated("more ids than the maximum");
        for (int32_t id : ids)
          if (id < 0 || id > bpe.maxId())
            violated("id " + std::to_string(id) + " outside [0, " + std::to_string(bpe.maxId()) + "]");
      }
    }
  } catch (const std::invalid_argument &e) {
    violated(std::string("the reader accepted what the runtime refuses: ") + e.what());
  }
  return 0;
}
